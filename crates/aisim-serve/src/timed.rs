//! Connections whose writes time out: a client that reads nothing of what
//! it is sent for the client timeout is dropped. (Reads are timed where
//! their meaning is known: hyper's header-read timeout, and each body
//! chunk in `http.rs`; a read pending at the socket level may be hyper
//! watching for a close while a handler works, which must not count.)

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

/// A connection whose writes fail once pending for the timeout.
pub struct TimedStream {
    inner: TcpStream,
    timeout: Duration,
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
    /// Wraps an accepted connection.
    pub fn new(inner: TcpStream, timeout: Duration) -> TimedStream {
        TimedStream {
            inner,
            timeout,
            write: Wait::new(timeout),
        }
    }
}

/// A stretch of `Pending` longer than the timeout becomes a timeout; the
/// clock starts at the first `Pending` after progress.
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
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
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
