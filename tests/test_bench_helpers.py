"""The benchmarks' report parsing (``bench/common.py``) and the sell-out sizing of
``bench/ordinary.py``: a misread wrk report makes a benchmark claim what it did not measure."""

from __future__ import annotations

import pytest
from bench.common import latency_ms, parse_wrk
from bench.ordinary import sellout_size, server_log_summary

# wrk 4.2 with --latency, a status tally script and --timeout: latencies of a second and more
# are printed with a trailing space.
REPORT = (
    "Running 3s test @ http://127.0.0.1:18991/\n"
    "  2 threads and 4 connections\n"
    "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
    "    Latency     1.23s    21.60ms   1.25s   100.00%\n"
    "    Req/Sec     1.00      0.00     1.00    100.00%\n"
    "  Latency Distribution\n"
    "     50%    1.24s \n"
    "     75%    1.25s \n"
    "     90%    1.25s \n"
    "     99%    1.25s \n"
    "  8 requests in 3.06s, 0.88KB read\n"
    "  Socket errors: connect 0, read 1, write 0, timeout 2\n"
    "  Non-2xx or 3xx responses: 3\n"
    "Requests/sec:      2.62\n"
    "Transfer/sec:     295.86B\n"
    "status 201 5\n"
    "status 400 3\n"
)


def test_parse_wrk_reads_every_figure():
    parsed = parse_wrk(REPORT)
    assert parsed["requests"] == 8
    assert parsed["requests_per_second"] == 2.62
    assert (parsed["p50"], parsed["p99"]) == ("1.24s", "1.25s")
    assert parsed["non_2xx"] == 3
    assert parsed["socket_errors"] == 3
    assert parsed["statuses"] == {201: 5, 400: 3}


def test_parse_wrk_without_tally_or_errors():
    plain = REPORT.replace("  Socket errors: connect 0, read 1, write 0, timeout 2\n", "")
    plain = plain.split("status 201")[0].replace("  Non-2xx or 3xx responses: 3\n", "")
    parsed = parse_wrk(plain)
    assert (parsed["statuses"], parsed["socket_errors"], parsed["non_2xx"]) == ({}, 0, 0)


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("812.00us", 0.812),
        ("12.34ms", 12.34),
        ("1.24s", 1240.0),
        ("2.00m", 120_000.0),
        (None, None),
    ],
)
def test_latency_ms(text, ms):
    assert latency_ms(text) == ms


def test_latency_ms_refuses_junk():
    with pytest.raises(ValueError, match="not a wrk latency"):
        latency_ms("fast")


def test_sellout_size_keeps_the_quota_a_fast_server_sells_twice_over():
    assert sellout_size(500, 1200.0, 10) == 500
    assert sellout_size(500, None, 10) == 500


def test_sellout_size_shrinks_for_a_slow_server():
    assert sellout_size(500, 40.0, 10) == 100  # a quarter of what 40/s sells in 10 s
    assert sellout_size(500, 1.0, 10) == 10  # never below 10


def test_server_log_summary_counts_5xx_and_refused_connections():
    log = "\n".join(
        [
            "2026-11-25 01:14:29,094 WARNING admit [x] answering 503: The database is "
            "unavailable right now. (DBAPIError: sorry, too many clients already",
            "2026-11-25 01:14:29,095 INFO admit.access [x] POST /api/v1/o/ 503 422.10ms",
            "2026-11-25 01:14:29,096 INFO admit.access [y] GET /api/v1/o/ 500 2.00ms",
            "2026-11-25 01:14:29,097 INFO admit.access [z] GET /api/v1/o/ 200 1.00ms",
            "Traceback (most recent call last):",
        ]
    )
    assert server_log_summary(log) == {
        "server_5xx": {"500": 1, "503": 1},
        "server_tracebacks": 1,
        "server_too_many_clients": 1,
    }


def test_status_tally_keeps_its_newline_escaped_for_lua():
    # A real newline inside the Lua string literal is a syntax error, and wrk then runs
    # silently without the script: GETs instead of POSTs, and no tally.
    from bench.common import STATUS_TALLY

    assert 'string.format("status %d %d\\n", code, n)' in STATUS_TALLY
