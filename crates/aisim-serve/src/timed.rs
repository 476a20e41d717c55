//! Connections that time out: a client that sends nothing (a request's
//! headers or body trickled, or an idle keep-alive connection) or reads
//! nothing of what it is sent for the client timeout is dropped, so slow
//! clients cannot hold the service's connections.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// A listener whose connections are [`TimedStream`]s.
pub struct TimedListener {
    inner: TcpListener,
    timeout: Duration,
}

impl TimedListener {
    /// Wraps `inner`, each connection timing out after `timeout` without progress.
    pub fn new(inner: TcpListener, timeout: Duration) -> TimedListener {
        TimedListener { inner, timeout }
    }
}

impl axum::serve::Listener for TimedListener {
    type Io = TimedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    return (TimedStream::new(stream, self.timeout), addr);
                }
                // Out of descriptors, a reset before accept: wait, go on.
                Err(e) => {
                    tracing::debug!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection whose reads and writes fail once pending for the timeout.
pub struct TimedStream {
    inner: TcpStream,
    timeout: Duration,
    read: Wait,
    write: Wait,
}

/// One direction's wait: the deadline of the current pending stretch.
struct Wait {
    deadline: Pin<Box<Sleep>>,
    waiting: bool,
}

impl Wait {
    fn new(timeout: Duration) -> Wait {
        Wait {
            deadline: Box::pin(tokio::time::sleep(timeout)),
            waiting: false,
        }
    }
}

impl TimedStream {
    fn new(inner: TcpStream, timeout: Duration) -> TimedStream {
        TimedStream {
            inner,
            timeout,
            read: Wait::new(timeout),
            write: Wait::new(timeout),
        }
    }
}

/// A stretch of `Pending` longer than the timeout becomes a timeout; the
/// clock starts at the first `Pending` after progress (the time the
/// service spends elsewhere, say running a handler, does not count).
fn timed<T>(
    polled: Poll<io::Result<T>>,
    wait: &mut Wait,
    timeout: Duration,
    cx: &mut Context<'_>,
) -> Poll<io::Result<T>> {
    match polled {
        Poll::Ready(r) => {
            wait.waiting = false;
            Poll::Ready(r)
        }
        Poll::Pending if !wait.waiting => {
            wait.waiting = true;
            wait.deadline.as_mut().reset(Instant::now() + timeout);
            // Registers the timer's waker.
            let _ = wait.deadline.as_mut().poll(cx);
            Poll::Pending
        }
        Poll::Pending => match wait.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client made no progress",
            ))),
            Poll::Pending => Poll::Pending,
        },
    }
}

impl AsyncRead for TimedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        timed(polled, &mut this.read, this.timeout, cx)
    }
}

impl AsyncWrite for TimedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        timed(polled, &mut this.write, this.timeout, cx)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        timed(polled, &mut this.write, this.timeout, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        timed(polled, &mut this.write, this.timeout, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
