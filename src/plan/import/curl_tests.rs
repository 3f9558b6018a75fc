//! `--from-curl` cases: command lines in the shapes browsers' "Copy as cURL" writes them
//! (Chrome and Edge: `-H` per header, `-b` for cookies, `--data-raw $'…'` when the body holds `'`,
//! `!` or control characters; Firefox: one line, `--compressed -X POST` first, non-ASCII as
//! `\xHH`; Safari: `-X 'POST'`, `--data-binary`), and typed ones.

use super::*;

fn ok(command: &str) -> CurlRequest {
    parse(command).unwrap_or_else(|e| panic!("{command}\n  refused: {e}"))
}

fn header<'a>(r: &'a CurlRequest, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn chrome_post_with_ansi_c_body_and_cookies() {
    let r = ok(r#"curl 'https://shop.example.com/api/cart?ref=home' \
  -H 'accept: application/json, text/plain, */*' \
  -H 'accept-language: en-GB,en;q=0.9' \
  -H 'content-type: application/json' \
  -b 'session=3f2a9c; theme=dark' \
  -H 'origin: https://shop.example.com' \
  -H 'priority: u=1, i' \
  -H 'referer: https://shop.example.com/cart' \
  -H 'sec-ch-ua: "Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99"' \
  -H 'sec-ch-ua-mobile: ?0' \
  -H 'sec-ch-ua-platform: "Linux"' \
  -H 'sec-fetch-dest: empty' \
  -H 'sec-fetch-mode: cors' \
  -H 'sec-fetch-site: same-origin' \
  -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36' \
  --data-raw $'{"item":42,"note":"a gift\u0021 it\'s for mum"}'"#);
    assert_eq!(r.method, "POST");
    assert_eq!(r.url.as_str(), "https://shop.example.com/api/cart?ref=home");
    assert_eq!(
        r.body.as_deref(),
        Some(r#"{"item":42,"note":"a gift! it's for mum"}"#)
    );
    assert_eq!(r.headers.len(), 14);
    assert_eq!(header(&r, "cookie"), Some("session=3f2a9c; theme=dark"));
    assert_eq!(
        header(&r, "sec-ch-ua"),
        Some(r#""Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99""#)
    );
    // The body's own content type is kept, not replaced by the form default.
    assert_eq!(header(&r, "content-type"), Some("application/json"));
    assert_eq!(r.headers[0].0, "accept", "order and spelling kept");
    assert!(!r.insecure && !r.http2 && r.timeout.is_none() && r.notes.is_empty());
}

#[test]
fn chrome_multipart_body_keeps_its_crlf() {
    let r = ok(r#"curl 'http://127.0.0.1:8080/upload' \
  -H 'Content-Type: multipart/form-data; boundary=----WebKitFormBoundaryQ3d' \
  --data-raw $'------WebKitFormBoundaryQ3d\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n------WebKitFormBoundaryQ3d--\r\n'"#);
    let body = r.body.unwrap();
    assert!(body.starts_with("------WebKitFormBoundaryQ3d\r\nContent-Disposition"));
    assert!(body.ends_with("\r\nhello\r\n------WebKitFormBoundaryQ3d--\r\n"));
    assert_eq!(r.method, "POST");
}

#[test]
fn firefox_one_line_with_latin1_escapes() {
    let r = ok(
        r#"curl 'https://app.example.org/graphql' --compressed -X POST -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' -H 'Accept: */*' -H 'Accept-Language: en-US,en;q=0.5' -H 'Accept-Encoding: gzip, deflate, br' -H 'Content-Type: application/json' -H 'Origin: https://app.example.org' -H 'Connection: keep-alive' -H 'Cookie: sid=abc123' -H 'Sec-Fetch-Dest: empty' -H 'Sec-Fetch-Mode: cors' -H 'Sec-Fetch-Site: same-origin' -H 'TE: trailers' --data-raw $'{"query":"{ me { name } }","variables":{"name":"Fr\xe9d\xe9ric"}}'"#,
    );
    assert_eq!(r.method, "POST");
    assert_eq!(
        r.body.as_deref(),
        Some(r#"{"query":"{ me { name } }","variables":{"name":"Frédéric"}}"#)
    );
    // --compressed adds nothing when the browser listed its encodings.
    assert_eq!(header(&r, "accept-encoding"), Some("gzip, deflate, br"));
    // HTTP/1.1: Connection and TE are sent as the browser sent them.
    assert_eq!(header(&r, "connection"), Some("keep-alive"));
    assert_eq!(r.headers.len(), 12);
}

#[test]
fn safari_quoted_method_and_data_binary() {
    let r = ok(r#"curl 'http://127.0.0.1:8080/tasks' \
-X 'PUT' \
-H 'Content-Type: application/json' \
-H 'Accept: application/json' \
-H 'User-Agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15' \
--data-binary '{"title":"buy milk"}'"#);
    assert_eq!(r.method, "PUT");
    assert_eq!(r.body.as_deref(), Some(r#"{"title":"buy milk"}"#));
    assert_eq!(r.headers.len(), 3);
}

#[test]
fn typed_form_data_query_auth_and_short_clusters() {
    let r = ok(
        "curl -sSL -u admin:s3cret -A 'bench/1.0' -e 'https://ref.example/;auto' -G \
                -d q=rust -d 'page=2' --data-urlencode 'tag=a b&c' localhost:8080/search",
    );
    assert_eq!(r.method, "GET");
    assert_eq!(
        r.url.as_str(),
        "http://localhost:8080/search?q=rust&page=2&tag=a%20b%26c"
    );
    assert_eq!(r.body, None);
    assert_eq!(header(&r, "authorization"), Some("Basic YWRtaW46czNjcmV0"));
    assert_eq!(header(&r, "user-agent"), Some("bench/1.0"));
    assert_eq!(header(&r, "referer"), Some("https://ref.example/"));
    assert_eq!(header(&r, "content-type"), None);
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(r.notes[0].contains("redirects"));

    let r = ok("curl -d a=1 --data 'b=2' http://h/f");
    assert_eq!(r.method, "POST");
    assert_eq!(r.body.as_deref(), Some("a=1&b=2"));
    assert_eq!(
        header(&r, "content-type"),
        Some("application/x-www-form-urlencoded")
    );
}

#[test]
fn json_option_attached_values_and_repeated_headers() {
    let r = ok(
        r#"curl -XPATCH -H'X-Trace: 1' -H 'x-trace: 2' http://h:3000/items/7#frag --json '{"a":' --json '1}' -b a=1 -b b=2"#,
    );
    assert_eq!(r.method, "PATCH");
    assert_eq!(r.url.as_str(), "http://h:3000/items/7");
    assert_eq!(r.body.as_deref(), Some(r#"{"a":1}"#));
    assert_eq!(header(&r, "x-trace"), Some("1, 2"));
    assert_eq!(header(&r, "content-type"), Some("application/json"));
    assert_eq!(header(&r, "accept"), Some("application/json"));
    assert_eq!(header(&r, "cookie"), Some("a=1; b=2"));
}

#[test]
fn tls_http2_timeout_head_and_url_credentials() {
    let r = ok(
        "curl -k --http2 -m 2.5 -I -H 'Connection: keep-alive' -H 'Content-Length: 3' \
                'https://bob:p%40ss@h.example:8443/x'",
    );
    assert!(r.insecure && r.http2);
    assert_eq!(r.timeout, Some(Duration::from_millis(2500)));
    assert_eq!(r.method, "HEAD");
    assert_eq!(r.url.as_str(), "https://h.example:8443/x");
    assert_eq!(header(&r, "authorization"), Some("Basic Ym9iOnBAc3M="));
    // HTTP/2 forbids Connection; Content-Length is volley's to write.
    assert_eq!(header(&r, "connection"), None);
    assert_eq!(header(&r, "content-length"), None);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("connection, content-length"))
    );
    // `Name;` sends an empty header, `Name:` none.
    let r = ok("curl http://h/ -H 'X-Empty;' -H 'Accept:'");
    assert_eq!(r.headers, [("X-Empty".to_string(), String::new())]);
}

#[test]
fn what_cannot_be_expressed_is_refused_by_name() {
    for (command, says) in [
        ("curl -F file=@a.txt http://h/", "`-F`"),
        ("curl --form 'a=b' http://h/", "multipart"),
        ("curl -x http://proxy:3128 http://h/", "`-x`"),
        ("curl -d @body.json http://h/", "reads the body from a file"),
        ("curl --data-binary @- http://h/", "file"),
        ("curl --json @req.json http://h/", "file"),
        ("curl --data-urlencode name@file http://h/", "file"),
        ("curl -b cookies.txt http://h/", "cookie file"),
        ("curl -H @headers.txt http://h/", "file"),
        ("curl --foo http://h/", "`--foo`"),
        ("curl -Z http://h/", "`-Z`"),
        ("curl -sZ http://h/", "`-Z`"),
        ("curl http://a/ http://b/", "more than one URL"),
        ("curl -H 'Accept: x'", "no URL"),
        ("curl -X", "needs a value"),
        ("wget http://h/", "not curl"),
        ("curl -u admin http://h/", "password"),
        ("curl ftp://h/file", "not http or https"),
        ("curl ^\"https://h/^\" -H ^\"a: b^\"", "Windows"),
        ("curl -m soon http://h/", "seconds"),
        ("curl http://h/ -H 'no colon'", "Name: value"),
        ("curl $HOST/x", "shell variable"),
        ("", "empty"),
    ] {
        match parse(command) {
            Ok(r) => panic!("{command:?} was accepted: {r:?}"),
            Err(e) => assert!(e.to_string().contains(says), "{command:?}: {e}"),
        }
    }
}
