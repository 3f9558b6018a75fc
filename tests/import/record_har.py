#!/usr/bin/env python3
"""Records tests/import/volley-serve.har: headless Chromium, driven over the DevTools protocol
(--remote-debugging-pipe, so nothing but the Python standard library is needed), loads a page of
`volley serve` and runs a short scripted session against it (a task created, read, updated and
deleted, an echo, a delay, an image); the Network domain's events are written as a HAR 1.2 file,
as DevTools' "Save all as HAR" would.

    python3 tests/import/record_har.py target/ci/volley tests/import/volley-serve.har

The session sends an Authorization and an X-Api-Key header and sets a cookie, so that the
importer's secret handling is tested on a real recording; the values are made up.
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

# What the page does once loaded: the requests the HAR holds, in order, with pauses between
# some of them (recorded as gaps, imported as think times).
SESSION = r"""
(async () => {
  const pause = (ms) => new Promise((r) => setTimeout(r, ms));
  const auth = { 'Authorization': 'Bearer s3cr3t-t0ken-4242', 'X-Api-Key': 'k3y-abc-999' };
  document.cookie = 'theme=dark; path=/';
  const img = new Image();
  img.src = '/bytes/64';
  await img.decode().catch(() => {});
  const created = await fetch('/tasks', {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ title: 'buy milk', done: false }),
  }).then((r) => r.json());
  await pause(150);
  await fetch('/tasks/' + created.id, { headers: auth }).then((r) => r.text());
  await pause(80);
  await fetch('/tasks/' + created.id, {
    method: 'PUT',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ title: 'buy milk', done: true }),
  }).then((r) => r.text());
  await fetch('/headers', { headers: { 'X-Api-Key': 'k3y-abc-999' } }).then((r) => r.text());
  await fetch('/echo', {
    method: 'POST',
    headers: { 'Content-Type': 'text/plain' },
    body: 'hello {{ not a template }}',
  }).then((r) => r.text());
  await pause(120);
  await fetch('/delay?ms=20').then((r) => r.text());
  await fetch('/tasks/' + created.id, { method: 'DELETE', headers: auth }).then((r) => r.text());
  return created.id;
})()
"""


class Pipe:
    """The DevTools protocol over Chromium's pipe: JSON messages ended by a NUL byte."""

    def __init__(self, write_fd, read_fd):
        self.w = os.fdopen(write_fd, "wb", buffering=0)
        self.r = os.fdopen(read_fd, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read(self):
        while b"\0" not in self.buf:
            chunk = self.r.read(1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.w.write(json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            if "method" in m:
                self.events.append(m)

    def settle(self, session):
        """Reads events until every request of `session` has finished or failed."""
        def open_requests():
            sent, ended = set(), set()
            for e in self.events:
                if e.get("sessionId") != session:
                    continue
                rid = e["params"].get("requestId")
                if e["method"] == "Network.requestWillBeSent":
                    sent.add(rid)
                elif e["method"] in ("Network.loadingFinished", "Network.loadingFailed"):
                    ended.add(rid)
            return sent - ended

        while open_requests():
            m = self._read()
            if "method" in m:
                self.events.append(m)

    def wait_for(self, method):
        for e in self.events:
            if e["method"] == method:
                return e
        while True:
            m = self._read()
            if "method" in m:
                self.events.append(m)
                if m["method"] == method:
                    return m


def start_serve(volley):
    p = subprocess.Popen(
        [volley, "serve", "--port", "0", "--threads", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = p.stdout.readline()
    return p, line.strip().rsplit(" ", 1)[-1]


def start_chromium(profile):
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()

    def fds():
        # Moved out of the way first, so that neither lands on the other's place.
        r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)
        os.dup2(r, 3, inheritable=True)
        os.dup2(w, 4, inheritable=True)

    p = subprocess.Popen(
        [
            os.environ.get("VOLLEY_CHROMIUM", "chromium"),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--remote-debugging-pipe",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        pass_fds=(3, 4),  # kept after preexec_fn put the pipes there
        preexec_fn=fds,
        stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(profile, "chromium.log"), "w"),
    )
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    return p, Pipe(to_chrome_w, from_chrome_r)


def iso(wall):
    t = datetime.datetime.fromtimestamp(wall, tz=datetime.timezone.utc)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def pairs(headers):
    return [{"name": k, "value": v} for k, v in headers.items()]


def entries(cdp, session):
    """HAR entries from the Network events, in the order the requests were sent."""
    reqs, extra, response_extra = {}, {}, {}
    for e in cdp.events:
        if e.get("sessionId") != session:
            continue
        p, m = e["params"], e["method"]
        rid = p.get("requestId")
        # The ExtraInfo events (the headers really sent and received, cookies included) may
        # come before or after the event they complete.
        if m == "Network.requestWillBeSent":
            reqs[rid] = {"sent": p, "response": None, "done": None}
        elif m == "Network.requestWillBeSentExtraInfo":
            extra[rid] = p["headers"]
        elif m == "Network.responseReceivedExtraInfo":
            response_extra[rid] = p["headers"]
        elif rid not in reqs:
            continue
        elif m == "Network.responseReceived":
            reqs[rid]["response"] = p["response"]
        elif m in ("Network.loadingFinished", "Network.loadingFailed"):
            reqs[rid]["done"] = p["timestamp"]
    out = []
    for rid, r in reqs.items():
        sent, resp = r["sent"], r["response"]
        if resp is None or r["done"] is None:
            continue
        req = sent["request"]
        url = req["url"]
        headers = dict(req["headers"])
        headers.update(extra.get(rid, {}))
        try:
            body = cdp.call("Network.getResponseBody", {"requestId": rid}, session)
        except RuntimeError:  # none kept (a 204, or a request that failed after its head)
            body = {"body": "", "base64Encoded": False}
        text = body["body"]
        post = None
        if req.get("hasPostData"):
            post = {
                "mimeType": headers.get("Content-Type", headers.get("content-type", "")),
                "text": req.get("postData", ""),
            }
        elapsed_ms = (r["done"] - sent["timestamp"]) * 1000
        entry = {
            "_resourceType": sent.get("type", "Other").lower(),
            "startedDateTime": iso(sent["wallTime"]),
            "time": round(elapsed_ms, 3),
            "request": {
                "method": req["method"],
                "url": url,
                "httpVersion": resp.get("protocol", "http/1.1"),
                "headers": pairs(headers),
                "queryString": [],
                "cookies": [],
                "headersSize": -1,
                "bodySize": len((req.get("postData") or "").encode()),
            },
            "response": {
                "status": resp["status"],
                "statusText": resp.get("statusText", ""),
                "httpVersion": resp.get("protocol", "http/1.1"),
                "headers": pairs(response_extra.get(rid) or resp["headers"]),
                "cookies": [],
                "content": {
                    "size": len(text),
                    "mimeType": resp.get("mimeType", ""),
                    "text": text,
                    **({"encoding": "base64"} if body["base64Encoded"] else {}),
                },
                "redirectURL": "",
                "headersSize": -1,
                "bodySize": -1,
            },
            "cache": {},
            "timings": {"send": 0, "wait": round(elapsed_ms, 3), "receive": 0},
        }
        if post is not None:
            entry["request"]["postData"] = post
        out.append((sent["timestamp"], entry))
    out.sort(key=lambda t: t[0])
    return [e for _, e in out]


def main():
    volley, har_path = sys.argv[1], sys.argv[2]
    serve, base = start_serve(volley)
    profile = tempfile.mkdtemp(prefix="volley-har-")
    chrome, cdp = start_chromium(profile)
    try:
        version = cdp.call("Browser.getVersion")
        target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        cdp.call("Network.enable", {}, session)
        cdp.call("Page.enable", {}, session)
        cdp.call("Page.navigate", {"url": base + "/"}, session)
        cdp.wait_for("Page.loadEventFired")
        done = cdp.call(
            "Runtime.evaluate",
            {"expression": SESSION, "awaitPromise": True, "returnByValue": True},
            session,
        )
        if "exceptionDetails" in done:
            raise RuntimeError(f"the session failed: {done['exceptionDetails']}")
        cdp.settle(session)
        har = {
            "log": {
                "version": "1.2",
                "creator": {"name": "tests/import/record_har.py", "version": "1"},
                "browser": {"name": "Chromium", "version": version["product"]},
                "pages": [],
                "entries": entries(cdp, session),
            }
        }
        with open(har_path, "w") as f:
            json.dump(har, f, indent=2)
            f.write("\n")
        print(f"wrote {har_path}: {len(har['log']['entries'])} entries from {base}")
    finally:
        chrome.terminate()
        chrome.wait()
        serve.terminate()
        serve.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
