"""A stand-in for ucx_perftest in check_perftest_compare.sh.

Server (no host argument): listens on -p PORT after STUB_LISTEN_DELAY
seconds (none where STUB_SERVER_DEAF is set: it ends at once), serves one
client and ends. Client (a host first): connects to -p PORT, failing as
ucx_perftest does where nothing listens, and prints a "Final:" line:
bandwidth (MiB/s, field 6) 400 GB/s for -x cuda_mgi and 200 for anything
else, latency (us, field 4) 10 and 20.
"""
import os
import socket
import sys
import time


def arg(flag, default=None):
    args = sys.argv[1:]
    return args[args.index(flag) + 1] if flag in args else default


def main():
    port = int(arg("-p"))
    client = len(sys.argv) > 1 and not sys.argv[1].startswith("-")
    if not client:
        if os.environ.get("STUB_SERVER_DEAF"):
            return 0
        time.sleep(float(os.environ.get("STUB_LISTEN_DELAY", "0")))
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", port))
        srv.listen(1)
        srv.settimeout(60)
        conn, _ = srv.accept()
        conn.recv(16)
        conn.close()
        return 0
    try:
        sock = socket.create_connection((sys.argv[1], port), timeout=5)
    except OSError as err:
        print("Error: connection to %s:%d failed: %s" % (sys.argv[1], port,
                                                         err))
        return 1
    fast = arg("-x", "") == "cuda_mgi" or \
        os.environ.get("UCX_TLS", "").find("cuda_mgi") >= 0
    gbps = 400.0 if fast else 200.0
    lat = 10.0 if fast else 20.0
    mibps = gbps * 1e9 / 1048576
    print("Final: %s 0.000 %.3f %.3f %.2f %.2f 0 0" % (arg("-n", "1"), lat,
                                                     lat, mibps, mibps))
    sock.sendall(b"done")
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
