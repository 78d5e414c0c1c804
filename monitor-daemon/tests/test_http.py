#!/usr/bin/env python3
"""hipstack-smid's HTTP connection handling: keep-alive, pipelining, HTTP/1.0 and Connection: close,
and the /metrics page that is rendered once per sample.

Usage: test_http.py HIPSTACK_SMID CAPTURES_DIR [unittest arguments]

Uses test_daemon.py's helpers (a daemon per test on 127.0.0.1 port 0, stopped by PID).
"""
import http.client
import sys
import time

import test_daemon as base
from test_daemon import raw_request, series, wait_ready


class KeepAliveTests(base.DaemonTest):
    def test_keep_alive_serves_several_requests_on_one_connection(self):
        d = self.start()
        wait_ready(d.port)
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
        self.addCleanup(conn.close)
        pages = []
        for _ in range(3):
            conn.request("GET", "/metrics")
            r = conn.getresponse()
            self.assertEqual(r.status, 200)
            self.assertEqual(r.getheader("Connection"), "keep-alive")
            pages.append(r.read().decode())
        self.assertIsNotNone(conn.sock)  # the same socket carried all three
        for page in pages:
            self.assert_family(page, "hipstack_gpu_temperature_junction_celsius")
            self.assert_family(page, "hipstack_gpu_up")
            self.assertTrue(page.endswith("\n"))

    def test_pipelined_requests_each_get_an_answer(self):
        d = self.start()
        wait_ready(d.port)
        answer = raw_request(d.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                     b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertEqual(answer.count("HTTP/1.1 200 "), 2, answer)
        self.assertIn("ok\n", answer)
        self.assertIn("ready\n", answer)
        self.assertTrue(answer.rstrip().endswith("ready"), answer)

    def test_http10_and_connection_close_end_the_connection(self):
        d = self.start()
        wait_ready(d.port)
        for request in (b"GET /healthz HTTP/1.0\r\n\r\n", b"GET /healthz HTTP/1.1\r\nConnection: Close\r\n\r\n"):
            answer = raw_request(d.port, request, timeout=1.5)  # returns once the daemon closes
            self.assertTrue(answer.startswith("HTTP/1.1 200 "), answer)
            self.assertIn("Connection: close", answer)

    def test_a_get_with_a_body_is_refused_not_read_as_a_request(self):
        d = self.start()
        wait_ready(d.port)
        smuggled = b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
        for head in (b"Content-Length: %d\r\n" % len(smuggled), b"Transfer-Encoding: chunked\r\n"):
            answer = raw_request(d.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n" + smuggled, timeout=1.5)
            self.assertTrue(answer.startswith("HTTP/1.1 400 "), answer)
            self.assertEqual(answer.count("HTTP/1.1 "), 1, answer)  # the body was not served as a request
            self.assertIn("Connection: close", answer)
        answer = raw_request(d.port, b"GET /healthz HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        self.assertTrue(answer.startswith("HTTP/1.1 200 "), answer)

    def test_cached_page_follows_new_samples(self):
        d = self.start(config=self.config("fast_interval_ms = 100\nmetrics_profile = full\n"))  # sample ages
        wait_ready(d.port)
        _, before = self.metrics(d.port)
        fetched = time.monotonic()
        ages = lambda samples: [v for _, v in series(samples, "hipstack_gpu_sample_age_seconds")]
        # Once the first page's samples are older than 0.3 s, a page with every sample younger than that
        # holds new samples, not a cached page: polled (a loaded machine samples late), with a deadline.
        deadline = fetched + 10
        while True:
            _, after = self.metrics(d.port)
            if time.monotonic() - fetched > 0.35 and len(ages(after)) == 8 and all(a < 0.3 for a in ages(after)):
                break
            self.assertLess(time.monotonic(), deadline, "no page of fresh samples within 10 s: ages %s" % ages(after))
            time.sleep(0.05)
        self.assertEqual(len(series(before, "hipstack_gpu_power_current_watts")), 8)
        self.assertEqual(series(before, "hipstack_gpu_power_current_watts"), series(after, "hipstack_gpu_power_current_watts"))


if __name__ == "__main__":
    sys.exit(base.main(__doc__))
