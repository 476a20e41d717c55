//! The HTTP API (docs/service.md; `/api/openapi.json`): routes, the token
//! check, CORS when asked, bodies read under a size limit and an idle
//! timeout. Handlers only translate: the stores do the work, on blocking
//! threads when it touches the disk at length.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use crate::error::ApiError;
use crate::jobs::{JobRecord, JobState, JobStore, ProgressView, OUTPUTS};
use crate::store::ids::is_id;
use crate::token::Token;
use crate::traces::TraceStore;

/// Largest JSON body (a job's request), bytes.
pub const MAX_JSON_BYTES: usize = 16 << 20;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// Uploaded traces.
    pub traces: Arc<TraceStore>,
    /// Jobs.
    pub jobs: Arc<JobStore>,
    /// The token every request must carry, when set.
    pub token: Option<Arc<Token>>,
    /// Largest upload, bytes.
    pub max_upload: u64,
    /// The origin CORS allows, when asked.
    pub cors: Option<HeaderValue>,
    /// `GET /api/kinds`, made once.
    pub kinds: Arc<Value>,
    /// How long a body may send nothing.
    pub client_timeout: std::time::Duration,
}

/// The service's routes.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/healthz", get(health))
        .route("/api/openapi.json", get(openapi))
        .route("/api/profiles", get(profiles))
        .route("/api/kinds", get(kinds))
        .route("/api/traces", post(upload).get(list_traces))
        .route("/api/traces/{id}", get(get_trace).delete(delete_trace))
        .route("/api/jobs", post(submit).get(list_jobs))
        .route("/api/jobs/{id}", get(get_job).delete(delete_job))
        .route("/api/jobs/{id}/cancel", post(cancel_job))
        .route("/api/jobs/{id}/{output}", get(job_output))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// The token (all but the page itself, which holds no data) and CORS.
async fn guard(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let preflight = req.method() == Method::OPTIONS;
    if preflight && s.cors.is_some() {
        return with_cors(StatusCode::NO_CONTENT.into_response(), &s.cors);
    }
    let open = matches!(*req.method(), Method::GET | Method::HEAD) && req.uri().path() == "/";
    if let (Some(token), false) = (&s.token, open) {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token);
        if !given.is_some_and(|g| token.matches(g.trim())) {
            let mut r = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "this service needs its token: send `Authorization: Bearer TOKEN`",
            )
            .into_response();
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return with_cors(r, &s.cors);
        }
    }
    with_cors(next.run(req).await, &s.cors)
}

fn with_cors(mut r: Response, origin: &Option<HeaderValue>) -> Response {
    if let Some(o) = origin {
        let h = r.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, o.clone());
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
        );
        h.insert(header::VARY, HeaderValue::from_static("origin"));
    }
    r
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint (the API is listed at /api/openapi.json)")
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src blob:",
            ),
        ],
        crate::page::PAGE,
    )
        .into_response()
}

async fn health() -> Json<Value> {
    Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
}

async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        crate::page::OPENAPI,
    )
        .into_response()
}

async fn profiles() -> Response {
    let listing = aisim_lab::jobs::catalog::profiles(&Default::default());
    json_text(aisim_report::to_json(&listing))
}

async fn kinds(State(s): State<AppState>) -> Json<Value> {
    Json((*s.kinds).clone())
}

fn json_text(text: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], text).into_response()
}

/// A store call that touches the disk, off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal("a store call", e))?
}

/// The next chunk of a body, or `None` at its end; a body that sends
/// nothing for `idle` is a 408.
async fn chunk(
    stream: &mut (impl futures_util::Stream<Item = Result<Bytes, axum::Error>> + Unpin),
    idle: std::time::Duration,
) -> Result<Option<Bytes>, ApiError> {
    match tokio::time::timeout(idle, stream.next()).await {
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!("the body sent nothing for {} s", idle.as_secs_f64()),
        )),
        Ok(None) => Ok(None),
        Ok(Some(Ok(b))) => Ok(Some(b)),
        Ok(Some(Err(e))) => Err(ApiError::bad(format!("reading the body: {e}"))),
    }
}

/// Bytes of a refused body read on and dropped before the refusal is sent:
/// a client still sending a body a little over the limit then reads the 413
/// instead of a broken connection (a larger one is cut off after this).
const DRAIN_BYTES: u64 = 1 << 20;

/// Reads and drops the rest of a refused body, up to `DRAIN_BYTES` and
/// for `idle` at most in all.
async fn drain(
    stream: &mut (impl futures_util::Stream<Item = Result<Bytes, axum::Error>> + Unpin),
    idle: std::time::Duration,
) {
    let rest = async {
        let mut drained = 0u64;
        while drained <= DRAIN_BYTES {
            match stream.next().await {
                Some(Ok(b)) => drained += b.len() as u64,
                _ => return,
            }
        }
    };
    let _ = tokio::time::timeout(idle, rest).await;
}

fn too_large(limit: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the body is larger than the limit of {limit} bytes"),
    )
}

/// A JSON body, at most [`MAX_JSON_BYTES`].
async fn read_json<T: serde::de::DeserializeOwned>(
    body: Body,
    idle: std::time::Duration,
) -> Result<T, ApiError> {
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    while let Some(b) = chunk(&mut stream, idle).await? {
        if bytes.len() + b.len() > MAX_JSON_BYTES {
            drain(&mut stream, idle).await;
            return Err(too_large(MAX_JSON_BYTES as u64));
        }
        bytes.extend_from_slice(&b);
    }
    serde_json::from_slice(&bytes).map_err(|e| ApiError::bad(format!("the body: {e}")))
}

/// `?name=` (and `?format=`) of an upload.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UploadQuery {
    name: String,
    #[serde(default)]
    format: Option<aisim_replay::trace::TraceFormat>,
}

fn query<T>(q: Result<Query<T>, axum::extract::rejection::QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t)
        .map_err(|e| ApiError::bad(format!("the query: {}", e.body_text())))
}

async fn upload(
    State(s): State<AppState>,
    q: Result<Query<UploadQuery>, axum::extract::rejection::QueryRejection>,
    body: Body,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let pending = s.traces.begin(&q.name)?;
    let written = async {
        let mut file = tokio::fs::File::create(&pending.file)
            .await
            .map_err(|e| ApiError::internal("storing the upload", e))?;
        let mut stream = body.into_data_stream();
        let mut size = 0u64;
        while let Some(b) = chunk(&mut stream, s.client_timeout).await? {
            size += b.len() as u64;
            if size > s.max_upload {
                drain(&mut stream, s.client_timeout).await;
                return Err(too_large(s.max_upload));
            }
            file.write_all(&b)
                .await
                .map_err(|e| ApiError::internal("storing the upload", e))?;
        }
        file.sync_all()
            .await
            .map_err(|e| ApiError::internal("storing the upload", e))
    }
    .await;
    if let Err(e) = written {
        pending.discard();
        return Err(e);
    }
    let traces = s.traces.clone();
    let info = blocking(move || traces.finish(&pending, q.format)).await?;
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

fn checked(id: &str, kind: char, what: &str) -> Result<(), ApiError> {
    if is_id(id, kind) {
        Ok(())
    } else {
        Err(ApiError::not_found(format!("no {what} {id}")))
    }
}

async fn list_traces(State(s): State<AppState>) -> Json<Vec<crate::traces::TraceInfo>> {
    Json(s.traces.list())
}

async fn get_trace(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    checked(&id, 't', "trace")?;
    Ok(Json(s.traces.get(&id)?).into_response())
}

async fn delete_trace(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    checked(&id, 't', "trace")?;
    let traces = s.traces.clone();
    blocking(move || traces.delete(&id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/jobs`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Submit {
    kind: String,
    request: Value,
    #[serde(default)]
    name: Option<String>,
}

async fn submit(State(s): State<AppState>, body: Body) -> Result<Response, ApiError> {
    let b: Submit = read_json(body, s.client_timeout).await?;
    let kind =
        aisim_report::job::JobKind::parse(&b.kind).map_err(|e| ApiError::bad(e.to_string()))?;
    let jobs = s.jobs.clone();
    let record = blocking(move || jobs.submit(kind, b.request, b.name)).await?;
    Ok((StatusCode::ACCEPTED, Json(json!({"id": record.id}))).into_response())
}

/// A job as the API shows it: its record (in a list, without its request),
/// and its progress while it runs.
#[derive(serde::Serialize)]
struct JobView {
    #[serde(flatten)]
    record: JobRecord,
    progress: Option<ProgressView>,
}

fn view(record: JobRecord, progress: Option<ProgressView>) -> JobView {
    JobView { record, progress }
}

async fn list_jobs(
    State(s): State<AppState>,
    q: Result<Query<HashMap<String, String>>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<JobView>>, ApiError> {
    let q = query(q)?;
    if let Some(k) = q.keys().find(|k| *k != "state") {
        return Err(ApiError::bad(format!(
            "the query: `{k}` is not a filter; `state` is"
        )));
    }
    let state = match q.get("state") {
        None => None,
        Some(text) => Some(
            serde_json::from_value::<JobState>(Value::String(text.clone())).map_err(|_| {
                ApiError::bad(format!(
                    "state={text}: one of queued, running, done, failed, cancelled"
                ))
            })?,
        ),
    };
    let all: Vec<JobView> = s
        .jobs
        .list(state)
        .into_iter()
        .map(|(r, p)| view(r, p))
        .collect();
    Ok(Json(all))
}

async fn get_job(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<JobView>, ApiError> {
    checked(&id, 'j', "job")?;
    let (r, p) = s.jobs.get(&id)?;
    Ok(Json(view(r, p)))
}

async fn cancel_job(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<JobView>, ApiError> {
    checked(&id, 'j', "job")?;
    let jobs = s.jobs.clone();
    let r = blocking(move || jobs.cancel(&id)).await?;
    Ok(Json(view(r.without_request(), None)))
}

async fn delete_job(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    checked(&id, 'j', "job")?;
    let jobs = s.jobs.clone();
    blocking(move || jobs.delete(&id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A done job's output, streamed from its file.
async fn job_output(
    State(s): State<AppState>,
    Path((id, output)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    checked(&id, 'j', "job")?;
    let name = match output.as_str() {
        "report" => "report.json",
        other => other,
    };
    let Some((name, media)) = OUTPUTS.iter().find(|(n, _)| *n == name) else {
        return Err(ApiError::not_found(format!(
            "no output {output}: report, report.html, requests.jsonl or fitted.json"
        )));
    };
    let path = s.jobs.output(&id, name)?;
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| ApiError::internal("reading the output", e))?;
    let stream = futures_util::stream::unfold(file, |mut f| async move {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0u8; 64 << 10];
        match f.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok::<_, std::io::Error>(Bytes::from(buf)), f))
            }
            Err(e) => Some((Err(e), f)),
        }
    });
    Ok(([(header::CONTENT_TYPE, *media)], Body::from_stream(stream)).into_response())
}
