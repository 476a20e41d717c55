//! `aisim serve`: a job service. Clients upload traces (kept whole: their
//! arrival times, lengths, prefix hashes and sessions), submit jobs whose
//! request is exactly the library's (`aisim_report::job`), poll them and
//! fetch their reports, over HTTP or from the web page at `/`.
//!
//! The HTTP side (axum on a small tokio runtime) only translates; the
//! simulations run on the service's own worker threads, one job each, in
//! submission order. Everything a client was told is stored is on disk
//! under `--data` (files committed by atomic rename), so a killed service
//! loses nothing: on the next start unfinished jobs run again.
//! docs/service.md is the user's guide.

pub mod error;
pub mod http;
pub mod jobs;
pub mod kinds;
pub mod page;
pub mod resolve;
pub mod store;
pub mod timed;
pub mod token;
pub mod traces;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use error::{ApiError, ServeError};
pub use token::Token;

use crate::http::AppState;
use crate::jobs::JobStore;
use crate::store::ids::IdMaker;
use crate::store::lock::DataLock;
use crate::traces::TraceStore;

/// Default upload limit: 1 GiB.
pub const DEFAULT_MAX_UPLOAD: u64 = 1 << 30;

/// How long a stop waits for running jobs to reach a point where they
/// check their cancel flag; those that do not are run again on the next start.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// How the service runs.
#[derive(Debug)]
pub struct ServeConfig {
    /// Where it listens.
    pub bind: SocketAddr,
    /// Its data folder.
    pub data: PathBuf,
    /// Jobs run at once.
    pub workers: usize,
    /// The token every request must carry.
    pub token: Option<Token>,
    /// Largest upload, bytes.
    pub max_upload: u64,
    /// The origin allowed to call it from a browser (CORS), if any.
    pub cors: Option<String>,
    /// Whether requests may name files on the server besides uploads.
    pub allow_local_files: bool,
    /// How long a connection may make no progress (a client sending or
    /// reading nothing) before it is dropped.
    pub client_timeout: Duration,
}

impl ServeConfig {
    /// Refuses what must not start: a non-loopback address without a token,
    /// no workers, a zero upload limit, a CORS origin that is not a header.
    pub fn check(&self) -> Result<(), ServeError> {
        if !self.bind.ip().is_loopback() && self.token.is_none() {
            return Err(ServeError::Config(format!(
                "--bind {}: a service reachable from other machines needs a token (--token-file FILE or AISIM_TOKEN); without one, bind 127.0.0.1",
                self.bind
            )));
        }
        if self.workers == 0 {
            return Err(ServeError::Config(
                "--workers 0: at least 1 worker runs the jobs".into(),
            ));
        }
        if self.client_timeout.is_zero() {
            return Err(ServeError::Config(
                "--client-timeout 0: give at least 1 second".into(),
            ));
        }
        if self.max_upload == 0 {
            return Err(ServeError::Config(
                "--max-upload 0: uploads need at least 1 byte".into(),
            ));
        }
        if let Some(o) = &self.cors {
            if axum::http::HeaderValue::from_str(o).is_err() || o.is_empty() {
                return Err(ServeError::Config(format!("--cors {o}: not an origin")));
            }
        }
        Ok(())
    }
}

/// Runs the service until SIGTERM or Ctrl-C; `listening` is told the
/// address once it accepts connections (with the real port when 0 was asked).
pub fn serve(config: ServeConfig, listening: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    config.check()?;
    std::fs::create_dir_all(&config.data)
        .map_err(|e| ServeError::Config(format!("--data {}: {e}", config.data.display())))?;
    let data = config
        .data
        .canonicalize()
        .map_err(|e| ServeError::Config(format!("--data {}: {e}", config.data.display())))?;
    let lock = DataLock::acquire(&data)?;
    let ids = Arc::new(IdMaker::new());
    let traces = Arc::new(TraceStore::open(&data, ids.clone())?);
    let jobs = Arc::new(JobStore::open(
        &data,
        ids,
        traces.clone(),
        config.allow_local_files,
    )?);
    // The folders just made survive a crash.
    store::atomic::sync_dir(&data)
        .map_err(|e| ServeError::io(format!("syncing {}", data.display()), e))?;
    let workers: Vec<_> = (0..config.workers)
        .map(|i| {
            let jobs = jobs.clone();
            std::thread::Builder::new()
                .name(format!("aisim-job-{i}"))
                .spawn(move || jobs.work())
                .map_err(|e| ServeError::io("starting a worker thread", e))
        })
        .collect::<Result<_, _>>()?;
    let state = AppState {
        traces,
        jobs: jobs.clone(),
        token: config.token.map(Arc::new),
        max_upload: config.max_upload,
        cors: config
            .cors
            .as_deref()
            .map(|o| axum::http::HeaderValue::from_str(o).expect("checked")),
        kinds: Arc::new(kinds::kinds()),
        client_timeout: config.client_timeout,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("aisim-http")
        .enable_all()
        .build()
        .map_err(|e| ServeError::io("starting the HTTP runtime", e))?;
    let router = http::router(state);
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(config.bind)
            .await
            .map_err(|e| ServeError::Config(format!("--bind {}: {e}", config.bind)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError::io("reading the bound address", e))?;
        listening(addr);
        accept_until_stopped(listener, router, config.client_timeout, &jobs).await;
        Ok(())
    });
    let deadline = Instant::now() + STOP_GRACE;
    while workers.iter().any(|w| !w.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(lock);
    served
}

/// Most connections served at once; one more waits in the kernel's backlog.
pub const MAX_CONNECTIONS: usize = 256;

/// Serves connections until SIGTERM or Ctrl-C; then asks the jobs to stop
/// at once, and gives open connections [`STOP_GRACE`] to finish. A
/// connection that sends its headers slower than `timeout`, stalls a body
/// (`http.rs`) or reads nothing of its answer for `timeout` is dropped.
async fn accept_until_stopped(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    timeout: Duration,
    jobs: &JobStore,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(timeout);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            _ = &mut stop => break,
        };
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors, a reset before accept: wait, go on.
                Err(e) => {
                    tracing::debug!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let io = hyper_util::rt::TokioIo::new(timed::TimedStream::new(stream, timeout));
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let connection = graceful.watch(http.serve_connection(io, service));
        tokio::spawn(async move {
            let _ = connection.await;
            drop(slot);
        });
    }
    // Running jobs are asked to stop now; they stay `running` on disk.
    jobs.stop();
    tokio::select! {
        _ = graceful.shutdown() => {},
        _ = tokio::time::sleep(STOP_GRACE) => {},
    }
}

/// SIGTERM or Ctrl-C.
async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("stopping: unfinished jobs run again on the next start");
}
