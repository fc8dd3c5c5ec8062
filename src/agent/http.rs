//! A small HTTP/1.1 client for the OpenAI-compatible backend: one POST per connection
//! (`Connection: close`), `http://` over a plain TCP stream and `https://` over rustls, the
//! response body handed out incrementally as it arrives.
//!
//! Every socket operation runs under a [`Guard`] that races it against cancellation, the
//! call's wall-clock deadline and the idle timeout (a fresh timer per read, so the idle limit
//! is the longest gap between bytes). The body framing (`Content-Length`, chunked, or
//! until close) is a sans-IO [`BodyDecoder`] fed from a buffer.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures_rustls::TlsConnector;
use futures_rustls::rustls::{self, ClientConfig, RootCertStore, pki_types::ServerName};
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use smol::{Timer, future};

use crate::process::Cancel;

/// An `http://` or `https://` URL, split for connecting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Url {
    pub tls: bool,
    /// Without brackets for IPv6 literals.
    pub host: String,
    pub port: u16,
    /// Starts with `/`; query strings are kept as they are.
    pub path: String,
}

impl Url {
    pub fn parse(s: &str) -> Result<Url, String> {
        let bad = |why: &str| format!("invalid URL '{s}': {why}");
        let (tls, rest) = if let Some(r) = strip_prefix_ci(s, "http://") {
            (false, r)
        } else if let Some(r) = strip_prefix_ci(s, "https://") {
            (true, r)
        } else {
            return Err(bad("expected http:// or https://"));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(bad("user information is not supported (use api_key_env)"));
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            match after.strip_prefix(':') {
                Some(p) => (h, p),
                None if after.is_empty() => (h, ""),
                None => return Err(bad("unexpected text after ']'")),
            }
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, p),
                None => (authority, ""),
            }
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = if port.is_empty() {
            default_port
        } else {
            port.parse().map_err(|_| bad("invalid port"))?
        };
        Ok(Url {
            tls,
            host: host.to_owned(),
            port,
            path: path.to_owned(),
        })
    }

    /// The `Host` header value.
    fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.tls { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

/// Why a guarded operation did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum HttpError {
    Cancelled,
    /// No byte for the idle limit.
    Idle,
    /// The call's wall-clock limit passed.
    Wall,
    /// Connection or protocol failure, with the OS or parser text.
    Io(String),
}

/// Cancellation and the two time limits every socket operation runs under.
pub(crate) struct Guard {
    pub cancel: Cancel,
    pub idle: Option<Duration>,
    pub deadline: Option<Instant>,
}

impl Guard {
    async fn run<T>(
        &self,
        what: &str,
        fut: impl Future<Output = std::io::Result<T>>,
    ) -> Result<T, HttpError> {
        let cancelled = async {
            self.cancel.cancelled().await;
            Err(HttpError::Cancelled)
        };
        let wall = async {
            match self.deadline {
                Some(d) => {
                    Timer::at(d).await;
                    Err(HttpError::Wall)
                }
                None => future::pending().await,
            }
        };
        let idle = async {
            match self.idle {
                Some(d) => {
                    Timer::after(d).await;
                    Err(HttpError::Idle)
                }
                None => future::pending().await,
            }
        };
        let work = async { fut.await.map_err(|e| HttpError::Io(format!("{what}: {e}"))) };
        future::or(cancelled, future::or(wall, future::or(idle, work))).await
    }
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

fn tls_config() -> Arc<ClientConfig> {
    static CONFIG: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("the ring provider supports the default TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

/// A response whose head has been read; the body is read with [`Response::chunk`].
pub(crate) struct Response {
    pub status: u16,
    headers: Vec<(String, String)>,
    io: Box<dyn Io>,
    /// Received, not yet decoded bytes.
    buf: Vec<u8>,
    body: BodyDecoder,
}

const MAX_HEAD: usize = 64 * 1024;

/// POST `body` to `url` with `headers` (plus `Host`, `Content-Length`, `Connection: close`)
/// and read the response head.
pub(crate) async fn post(
    url: &Url,
    headers: &[(&str, String)],
    body: &[u8],
    guard: &Guard,
) -> Result<Response, HttpError> {
    let addr = format!("{}:{}", url.host, url.port);
    let tcp = guard
        .run(
            &format!("cannot connect to {addr}"),
            smol::net::TcpStream::connect((url.host.as_str(), url.port)),
        )
        .await?;
    tcp.set_nodelay(true).ok();
    let mut io: Box<dyn Io> = if url.tls {
        let name = ServerName::try_from(url.host.clone())
            .map_err(|e| HttpError::Io(format!("invalid TLS server name '{}': {e}", url.host)))?;
        let tls = TlsConnector::from(tls_config());
        Box::new(
            guard
                .run(
                    &format!("TLS handshake with {addr} failed"),
                    tls.connect(name, tcp),
                )
                .await?,
        )
    } else {
        Box::new(tcp)
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        url.path,
        url.host_header(),
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut request = head.into_bytes();
    request.extend_from_slice(body);
    let write_err = format!("cannot send the request to {addr}");
    guard.run(&write_err, io.write_all(&request)).await?;
    guard.run(&write_err, io.flush()).await?;

    let mut buf = Vec::new();
    loop {
        let end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            if buf.len() > MAX_HEAD {
                return Err(HttpError::Io(format!(
                    "response head from {addr} exceeds {MAX_HEAD} bytes"
                )));
            }
            if read_more(&mut io, &mut buf, guard, &addr).await? == 0 {
                return Err(HttpError::Io(format!(
                    "connection to {addr} closed before a response arrived"
                )));
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let (status, headers) = parse_head(&head)
            .map_err(|e| HttpError::Io(format!("invalid response from {addr}: {e}")))?;
        if (100..200).contains(&status) {
            continue; // an interim response (100 Continue, 103 Early Hints)
        }
        let body = BodyDecoder::for_response(status, &headers)
            .map_err(|e| HttpError::Io(format!("invalid response from {addr}: {e}")))?;
        return Ok(Response {
            status,
            headers,
            io,
            buf,
            body,
        });
    }
}

async fn read_more(
    io: &mut Box<dyn Io>,
    buf: &mut Vec<u8>,
    guard: &Guard,
    addr: &str,
) -> Result<usize, HttpError> {
    let mut chunk = [0u8; 16 * 1024];
    let n = guard
        .run(&format!("connection to {addr} failed"), io.read(&mut chunk))
        .await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn parse_head(head: &str) -> Result<(u16, Vec<(String, String)>), String> {
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad status line '{status_line}'"));
    }
    let status = parts
        .next()
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..1000).contains(s))
        .ok_or_else(|| format!("bad status line '{status_line}'"))?;
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| format!("bad header line '{line}'"))?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    Ok((status, headers))
}

impl Response {
    /// A header's value (name case-insensitive; the first of repeated headers).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The next piece of the decoded body; `None` at its end.
    pub async fn chunk(&mut self, guard: &Guard) -> Result<Option<Vec<u8>>, HttpError> {
        loop {
            let mut out = Vec::new();
            self.body
                .decode(&mut self.buf, &mut out)
                .map_err(HttpError::Io)?;
            if !out.is_empty() {
                return Ok(Some(out));
            }
            if self.body.is_done() {
                return Ok(None);
            }
            let mut chunk = [0u8; 16 * 1024];
            // A TLS peer that closes without close_notify reports UnexpectedEof: for a body
            // framed by the close that is its end, otherwise the check below reports it.
            let read = async {
                match self.io.read(&mut chunk).await {
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
                    r => r,
                }
            };
            let n = guard
                .run("connection failed while reading the response", read)
                .await?;
            if n == 0 {
                return if self.body.ends_at_close() {
                    Ok(None)
                } else {
                    Err(HttpError::Io(
                        "connection closed in the middle of the response body".into(),
                    ))
                };
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// The rest of the body, at most `limit` bytes kept (the rest is read and dropped).
    pub async fn read_to_end(&mut self, guard: &Guard, limit: usize) -> Result<Vec<u8>, HttpError> {
        let mut all = Vec::new();
        while let Some(c) = self.chunk(guard).await? {
            let room = limit.saturating_sub(all.len());
            all.extend_from_slice(&c[..c.len().min(room)]);
        }
        Ok(all)
    }
}

/// Decodes a response body's framing from raw bytes (sans-IO).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BodyDecoder {
    /// `Content-Length`: bytes still expected.
    Length(u64),
    /// Until the connection closes.
    UntilClose,
    Chunked(ChunkState),
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ChunkState {
    /// Expecting a `<hex size>[;ext]\r\n` line.
    Size,
    /// Inside a chunk: bytes left.
    Data(u64),
    /// The `\r\n` after a chunk's data.
    DataEnd,
    /// Trailer lines up to an empty line.
    Trailer,
}

impl BodyDecoder {
    pub fn for_response(status: u16, headers: &[(String, String)]) -> Result<BodyDecoder, String> {
        if status == 204 || status == 304 {
            return Ok(BodyDecoder::Done);
        }
        let get = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        if let Some(te) = get("transfer-encoding") {
            if te.to_ascii_lowercase().contains("chunked") {
                return Ok(BodyDecoder::Chunked(ChunkState::Size));
            }
            return Ok(BodyDecoder::UntilClose);
        }
        match get("content-length") {
            Some(n) => match n.parse::<u64>() {
                Ok(0) => Ok(BodyDecoder::Done),
                Ok(n) => Ok(BodyDecoder::Length(n)),
                Err(_) => Err(format!("bad Content-Length '{n}'")),
            },
            None => Ok(BodyDecoder::UntilClose),
        }
    }

    pub fn is_done(&self) -> bool {
        *self == BodyDecoder::Done
    }

    pub fn ends_at_close(&self) -> bool {
        matches!(self, BodyDecoder::UntilClose | BodyDecoder::Done)
    }

    /// Move the body bytes available in `input` to `out`, consuming framing as it goes.
    pub fn decode(&mut self, input: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<(), String> {
        let mut pos = 0;
        let result = self.decode_from(input, &mut pos, out);
        input.drain(..pos);
        result
    }

    fn decode_from(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        loop {
            let rest = &input[*pos..];
            match self {
                BodyDecoder::Done => return Ok(()),
                BodyDecoder::UntilClose => {
                    out.extend_from_slice(rest);
                    *pos = input.len();
                    return Ok(());
                }
                BodyDecoder::Length(left) => {
                    let n = rest.len().min(usize::try_from(*left).unwrap_or(usize::MAX));
                    out.extend_from_slice(&rest[..n]);
                    *pos += n;
                    *left -= n as u64;
                    if *left == 0 {
                        *self = BodyDecoder::Done;
                    }
                    return Ok(());
                }
                BodyDecoder::Chunked(state) => match state {
                    ChunkState::Size => {
                        let Some(eol) = find(rest, b"\r\n") else {
                            return if rest.len() > 4096 {
                                Err("chunk size line too long".into())
                            } else {
                                Ok(())
                            };
                        };
                        let line = std::str::from_utf8(&rest[..eol]).unwrap_or("");
                        let hex = line.split(';').next().unwrap_or("").trim();
                        let size = u64::from_str_radix(hex, 16)
                            .map_err(|_| format!("bad chunk size '{line}'"))?;
                        *pos += eol + 2;
                        *state = if size == 0 {
                            ChunkState::Trailer
                        } else {
                            ChunkState::Data(size)
                        };
                    }
                    ChunkState::Data(left) => {
                        if rest.is_empty() {
                            return Ok(());
                        }
                        let n = rest.len().min(usize::try_from(*left).unwrap_or(usize::MAX));
                        out.extend_from_slice(&rest[..n]);
                        *pos += n;
                        *left -= n as u64;
                        if *left == 0 {
                            *state = ChunkState::DataEnd;
                        }
                    }
                    ChunkState::DataEnd => {
                        if rest.len() < 2 {
                            return Ok(());
                        }
                        if &rest[..2] != b"\r\n" {
                            return Err("missing CRLF after chunk data".into());
                        }
                        *pos += 2;
                        *state = ChunkState::Size;
                    }
                    ChunkState::Trailer => {
                        let Some(eol) = find(rest, b"\r\n") else {
                            return Ok(());
                        };
                        *pos += eol + 2;
                        if eol == 0 {
                            *self = BodyDecoder::Done;
                        }
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = Url::parse("http://127.0.0.1:11434/v1").unwrap();
        assert_eq!(
            (u.tls, u.host.as_str(), u.port, u.path.as_str()),
            (false, "127.0.0.1", 11434, "/v1")
        );
        assert_eq!(u.host_header(), "127.0.0.1:11434");
        let u = Url::parse("HTTPS://api.example.com").unwrap();
        assert_eq!((u.tls, u.port, u.path.as_str()), (true, 443, "/"));
        assert_eq!(u.host_header(), "api.example.com");
        let u = Url::parse("http://[::1]:8080/x/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 8080));
        assert_eq!(u.host_header(), "[::1]:8080");
        assert!(Url::parse("ftp://x").is_err());
        assert!(Url::parse("http://:80").is_err());
        assert!(Url::parse("http://h:port").is_err());
        assert!(Url::parse("http://u:p@h").is_err());
    }

    #[test]
    fn heads() {
        let (s, h) = parse_head(
            "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\nX: a:b\r\n\r\n",
        )
        .unwrap();
        assert_eq!(s, 429);
        assert_eq!(h[1], ("x".to_owned(), "a:b".to_owned()));
        assert!(parse_head("SMTP 220 hi\r\n\r\n").is_err());
        assert!(parse_head("HTTP/1.1 abc\r\n\r\n").is_err());
    }

    fn decode_all(mut d: BodyDecoder, pieces: &[&[u8]]) -> (Vec<u8>, BodyDecoder) {
        let (mut buf, mut out) = (Vec::new(), Vec::new());
        for p in pieces {
            buf.extend_from_slice(p);
            d.decode(&mut buf, &mut out).unwrap();
        }
        (out, d)
    }

    #[test]
    fn chunked_bodies_split_anywhere() {
        let raw = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n";
        for cut in 0..raw.len() {
            for cut2 in cut..raw.len() {
                let (out, d) = decode_all(
                    BodyDecoder::Chunked(ChunkState::Size),
                    &[&raw[..cut], &raw[cut..cut2], &raw[cut2..]],
                );
                assert_eq!(out, b"hello world");
                assert!(d.is_done());
            }
        }
        let mut d = BodyDecoder::Chunked(ChunkState::Size);
        let mut buf = b"zz\r\n".to_vec();
        assert!(d.decode(&mut buf, &mut Vec::new()).is_err());
    }

    #[test]
    fn length_and_close_framing() {
        let h = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
        let d = BodyDecoder::for_response(200, &h("content-length", "4")).unwrap();
        let (out, d) = decode_all(d, &[b"ab", b"cdef"]);
        assert_eq!(out, b"abcd");
        assert!(d.is_done());
        let d = BodyDecoder::for_response(200, &[]).unwrap();
        assert!(d.ends_at_close());
        assert_eq!(
            BodyDecoder::for_response(204, &[]).unwrap(),
            BodyDecoder::Done
        );
        assert!(BodyDecoder::for_response(200, &h("content-length", "x")).is_err());
    }
}
