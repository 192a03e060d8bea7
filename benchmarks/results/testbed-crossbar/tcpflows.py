#!/usr/bin/python3
"""Raw TCP flows between emulated hosts, without UCX or meshcast (mechanism.sh runs it).

  tcpflows.py recv PORT            accept connections on PORT forever, read each to EOF, close
  tcpflows.py send START CC ADDR:PORT:BYTES...
                                   at time.time() == START open one connection per argument,
                                   with congestion control CC, send BYTES on each, and print
                                   the seconds from START until the last receiver closed
"""
import socket, sys, threading, time


def serve(port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(256)

    def drain(c):
        while c.recv(1 << 20):
            pass
        c.close()

    while True:
        c, _ = ls.accept()
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def send(start, cc, flows):
    buf = bytes(1 << 20)
    socks = []
    for f in flows:
        addr, port, n = f.split(":")
        s = socket.socket()
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        s.connect((addr, int(port)))
        socks.append((s, int(n)))
    time.sleep(max(0.0, start - time.time()))

    def run(s, n):
        while n > 0:
            k = min(n, len(buf))
            s.sendall(buf[:k])
            n -= k
        s.shutdown(socket.SHUT_WR)
        s.recv(1)  # the receiver closes after reading everything
        s.close()

    ts = [threading.Thread(target=run, args=sn) for sn in socks]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"{time.time() - start:.6f}")


if sys.argv[1] == "recv":
    serve(int(sys.argv[2]))
else:
    send(float(sys.argv[2]), sys.argv[3], sys.argv[4:])
