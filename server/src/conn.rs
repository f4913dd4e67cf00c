//! Connections: the accept loop and per-connection deadlines that keep slow or silent clients from
//! holding the server (slowloris and its cousins).
//!
//! poem's own server offers no header-read or body timeouts, so [`serve`] runs hyper-util's
//! HTTP/1 + HTTP/2 connection builder over the poem endpoint itself, with:
//!
//! - a cap on open connections ([`Limits::max_connections`]): beyond it the server stops accepting,
//!   so new connections wait in the kernel's listen backlog until one closes;
//! - a header deadline ([`Limits::header_timeout`]): a new connection, or a kept-alive one whose
//!   next request has begun, must deliver the whole request head within it;
//! - a keep-alive deadline ([`Limits::keep_alive_timeout`]): an idle connection between requests is
//!   closed after it;
//! - an idle deadline while a request is served ([`Limits::body_idle_timeout`]): no byte of the
//!   request body for that long answers 408 and closes the connection ([`body_idle`]); a client
//!   that accepts no byte of the response for that long is disconnected.
//!
//! The head and keep-alive deadlines are enforced on the socket's reads ([`Guarded`]): a read that
//! waits past the deadline of the connection's phase fails with `TimedOut`, and hyper closes the
//! connection. While a request is in flight there is no read deadline (the handler may be busy
//! extracting); the body's own idle deadline applies instead.

use std::{
    convert::Infallible,
    future::Future,
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll, Waker},
    time::Duration,
};

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use parking_lot::Mutex;
use poem::{
    Body, Endpoint, EndpointExt, IntoResponse, Request, Response,
    http::{HeaderValue, StatusCode, header},
    listener::Acceptor,
};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    sync::{Semaphore, watch},
    task::JoinSet,
    time::{Instant, Sleep},
};

use crate::{config::Settings, problem::ApiError};

/// Bytes of a request body left unread by an early answer that are read and dropped so the
/// connection stays usable ([`body_idle`]); beyond them the answer closes the connection.
pub const DRAIN_LIMIT_BYTES: u64 = 4 * 1024 * 1024;

/// Largest request head (request line and headers) read, in bytes: beyond it HTTP/1 answers 431.
/// Also the HTTP/2 header list limit.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most headers in one HTTP/1 request (431 beyond).
pub const MAX_HEADERS: usize = 100;
/// Streams open at once on one HTTP/2 connection.
pub const MAX_HTTP2_STREAMS: u32 = 200;
/// HTTP/2 streams reset by the client before being answered, tolerated before the connection is
/// closed (the "rapid reset" flood).
pub const MAX_HTTP2_PENDING_RESETS: usize = 20;

/// The connection limits [`serve`] enforces (from [`Settings`]).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Time to receive a whole request head, from the connection's start or the first byte of a
    /// kept-alive connection's next request.
    pub header_timeout: Duration,
    /// Longest wait for the next byte of a request body, or for the client to accept the next
    /// byte of a response.
    pub body_idle_timeout: Duration,
    /// Longest idle time of a kept-alive connection between requests.
    pub keep_alive_timeout: Duration,
    /// Connections open at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// How long a shutdown waits for requests in flight.
    pub shutdown_grace: Duration,
}

impl From<&Settings> for Limits {
    fn from(s: &Settings) -> Self {
        Self {
            header_timeout: s.header_timeout,
            body_idle_timeout: s.body_idle_timeout,
            keep_alive_timeout: s.keep_alive_timeout,
            max_connections: s.max_connections.max(1),
            shutdown_grace: s.shutdown_grace,
        }
    }
}

/// Serves `endpoint` on `acceptor` under `limits` until `shutdown` resolves; then stops accepting,
/// lets connections finish their requests for up to [`Limits::shutdown_grace`], and returns.
pub async fn serve<A, E>(
    mut acceptor: A,
    endpoint: E,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()>
where
    A: Acceptor,
    E: Endpoint + 'static,
{
    let endpoint = Arc::new(endpoint.map_to_response());
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        // Reap finished connections so the set does not grow with the server's lifetime.
        while connections.try_join_next().is_some() {}
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = acceptor.accept() => accepted,
        };
        let (io, local, remote, scheme) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let endpoint = endpoint.clone();
        let stop = stop_rx.clone();
        connections.spawn(async move {
            let _permit = permit;
            let shared = Arc::new(Shared::new(limits));
            let service = hyper::service::service_fn({
                let shared = shared.clone();
                move |req: hyper::Request<Incoming>| {
                    let active = Active::start(shared.clone());
                    let endpoint = endpoint.clone();
                    let req = Request::from((req, local.clone(), remote.clone(), scheme.clone()));
                    async move {
                        let response: hyper::Response<BoxBody<Bytes, io::Error>> =
                            endpoint.get_response(req).await.into();
                        Ok::<_, Infallible>(response.map(|body| Tracked {
                            body,
                            _active: active,
                        }))
                    }
                }
            });
            let io = TokioIo::new(Guarded::new(io, shared, limits.body_idle_timeout));
            let mut builder = auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .max_buf_size(MAX_HEAD_BYTES)
                .max_headers(MAX_HEADERS);
            // poem's settings, kept: header block size, streams, reset-flood guard.
            builder
                .http2()
                .max_header_list_size(MAX_HEAD_BYTES as u32)
                .max_concurrent_streams(MAX_HTTP2_STREAMS)
                .max_pending_accept_reset_streams(MAX_HTTP2_PENDING_RESETS);
            let conn = builder.serve_connection_with_upgrades(io, service);
            tokio::pin!(conn);
            let mut stop = stop;
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "connection closed with an error");
                    }
                    return;
                }
                _ = stop.wait_for(|stopping| *stopping) => {}
            }
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        });
    }
    // Closing the listener refuses new connections while the open ones drain.
    drop(acceptor);
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(limits.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "shutdown grace over; closing the remaining connections"
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// Where a connection is between requests, and hence which read deadline applies.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Reading a request head: it must be complete by the deadline.
    Head(Instant),
    /// Idle between requests: the next request must start by the deadline.
    Idle(Instant),
    /// This many requests in flight (more than one only with HTTP/2): no read deadline.
    Busy(usize),
}

/// The phase of one connection, shared by its socket wrapper and its requests.
struct Shared {
    phase: Mutex<Phase>,
    limits: Limits,
    /// The task last waiting on a read: woken when the phase changes, because hyper does not
    /// poll the socket again by itself when a response ends and the read deadline begins.
    reader: Mutex<Option<Waker>>,
}

impl Shared {
    fn new(limits: Limits) -> Self {
        Self {
            phase: Mutex::new(Phase::Head(Instant::now() + limits.header_timeout)),
            limits,
            reader: Mutex::new(None),
        }
    }

    fn read_deadline(&self) -> Option<Instant> {
        match *self.phase.lock() {
            Phase::Head(at) | Phase::Idle(at) => Some(at),
            Phase::Busy(_) => None,
        }
    }

    /// Bytes arrived: an idle connection has begun its next request.
    fn bytes_read(&self) {
        let mut phase = self.phase.lock();
        if let Phase::Idle(_) = *phase {
            *phase = Phase::Head(Instant::now() + self.limits.header_timeout);
        }
    }
}

/// One request in flight; dropped with its response body (or when the request is abandoned).
struct Active(Arc<Shared>);

impl Active {
    fn start(shared: Arc<Shared>) -> Self {
        {
            let mut phase = shared.phase.lock();
            *phase = match *phase {
                Phase::Busy(n) => Phase::Busy(n + 1),
                Phase::Head(_) | Phase::Idle(_) => Phase::Busy(1),
            };
        }
        Self(shared)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        let idle = {
            let mut phase = self.0.phase.lock();
            *phase = match *phase {
                Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
                _ => Phase::Idle(Instant::now() + self.0.limits.keep_alive_timeout),
            };
            matches!(*phase, Phase::Idle(_))
        };
        if idle && let Some(reader) = self.0.reader.lock().take() {
            reader.wake();
        }
    }
}

/// A response body that keeps its request counted as in flight until hyper is done with it.
struct Tracked {
    body: BoxBody<Bytes, io::Error>,
    _active: Active,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A socket whose reads fail with `TimedOut` past the deadline of the connection's phase, and
/// whose writes fail when the peer accepts nothing for the idle timeout.
struct Guarded<T> {
    io: T,
    shared: Arc<Shared>,
    read_timer: Pin<Box<Sleep>>,
    write_timer: Pin<Box<Sleep>>,
    write_stalled: bool,
    write_idle: Duration,
}

impl<T> Guarded<T> {
    fn new(io: T, shared: Arc<Shared>, write_idle: Duration) -> Self {
        let far = Instant::now() + Duration::from_secs(86_400);
        Self {
            io,
            shared,
            read_timer: Box::pin(tokio::time::sleep_until(far)),
            write_timer: Box::pin(tokio::time::sleep_until(far)),
            write_stalled: false,
            write_idle,
        }
    }

    /// After a write returned `Pending`: fails once the peer has accepted nothing for too long.
    fn write_pending<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        if !self.write_stalled {
            self.write_stalled = true;
            self.write_timer
                .as_mut()
                .reset(Instant::now() + self.write_idle);
        }
        if self.write_timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client accepted no response bytes within the idle timeout",
            )));
        }
        Poll::Pending
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.shared.bytes_read();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                {
                    let mut reader = this.shared.reader.lock();
                    if !reader.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        *reader = Some(cx.waker().clone());
                    }
                }
                if let Some(deadline) = this.shared.read_deadline() {
                    if this.read_timer.deadline() != deadline {
                        this.read_timer.as_mut().reset(deadline);
                    }
                    if this.read_timer.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "no complete request head within the time allowed",
                        )));
                    }
                }
                Poll::Pending
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.io).poll_write(cx, buf) {
            Poll::Pending => this.write_pending(cx),
            ready => {
                this.write_stalled = false;
                ready
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.io).poll_write_vectored(cx, bufs) {
            Poll::Pending => this.write_pending(cx),
            ready => {
                this.write_stalled = false;
                ready
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// Middleware: a request body that sends no byte for `idle` ends the request with 408 (problem
/// details) and `Connection: close`, whatever the handler made of the broken body.
pub async fn body_idle<E: Endpoint>(
    next: Arc<E>,
    mut req: Request,
    idle: Duration,
) -> poem::Result<Response> {
    let stalled = Arc::new(AtomicBool::new(false));
    let flag = stalled.clone();
    let chunks = req.take_body().into_bytes_stream();
    let guarded = futures_util::stream::unfold(Some(chunks), move |chunks| {
        let flag = flag.clone();
        async move {
            let mut chunks = chunks?;
            match tokio::time::timeout(idle, chunks.next()).await {
                Ok(Some(chunk)) => Some((chunk, Some(chunks))),
                Ok(None) => None,
                Err(_) => {
                    flag.store(true, Ordering::Release);
                    let e = io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the request body stalled past the idle timeout",
                    );
                    Some((Err(e), None))
                }
            }
        }
    });
    // What the handler leaves unread comes back here, to be drained before the answer.
    let unread: Unread = Arc::default();
    let http1 = req.version() < poem::http::Version::HTTP_2;
    let declared = req
        .header(header::CONTENT_LENGTH)
        .and_then(|v| v.parse::<u64>().ok());
    req.set_body(Body::from_bytes_stream(Returned {
        chunks: Some(guarded.boxed()),
        ended: false,
        unread: unread.clone(),
    }));
    let result = next.call(req).await.map(IntoResponse::into_response);
    if !stalled.load(Ordering::Acquire) {
        let rest = unread.lock().take();
        let Some(rest) = rest else {
            return result;
        };
        // An answer given before the body was read (401, 404, 413, 415, a bad parameter): the
        // rest is read and dropped, up to a bound, so the connection can serve the client's
        // next request; past the bound the answer says `Connection: close` and the connection
        // closes after it. Either way a pooled client never reuses a connection that is gone.
        let drained = match declared {
            // Too much to be worth reading: the connection closes instead.
            Some(len) if len > DRAIN_LIMIT_BYTES => false,
            _ => drain(rest, DRAIN_LIMIT_BYTES).await,
        };
        return result.map(|mut response| {
            if !drained && http1 {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            response
        });
    }
    let mut response = ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "no byte of the request body arrived for {} seconds",
            idle.as_secs_f64()
        ),
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    Ok(response)
}

type Chunks = futures_util::stream::BoxStream<'static, io::Result<Bytes>>;

/// Where a request body the handler dropped unread is put back ([`Returned`]).
type Unread = Arc<Mutex<Option<Chunks>>>;

/// A request body that, dropped before its end, hands what is left to [`Unread`].
struct Returned {
    chunks: Option<Chunks>,
    ended: bool,
    unread: Unread,
}

impl futures_util::Stream for Returned {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Some(chunks) = self.chunks.as_mut() else {
            return Poll::Ready(None);
        };
        let next = chunks.poll_next_unpin(cx);
        if let Poll::Ready(None | Some(Err(_))) = &next {
            self.ended = true;
        }
        next
    }
}

impl Drop for Returned {
    fn drop(&mut self) {
        if !self.ended
            && let Some(chunks) = self.chunks.take()
        {
            *self.unread.lock() = Some(chunks);
        }
    }
}

/// Reads and drops `chunks` to their end, at most `limit` bytes: whether the end was reached
/// (each chunk still under the body's idle deadline).
async fn drain(mut chunks: Chunks, limit: u64) -> bool {
    let mut read = 0u64;
    loop {
        match chunks.next().await {
            None => return true,
            Some(Ok(chunk)) => {
                read += chunk.len() as u64;
                if read > limit {
                    return false;
                }
            }
            Some(Err(_)) => return false,
        }
    }
}
