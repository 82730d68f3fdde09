# Test-only: an HTTP server that writes each request's headers on stdout and answers 401; its
# port first ('port N'). Run as another user by the tests of loopback credentials (python3 -c,
# see other-user-server.ts): python3 -c <this> HOST [PORT].
import http.server, socket, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        sys.stdout.write(str(self.headers)); sys.stdout.flush()
        self.send_response(401); self.send_header('content-length', '0'); self.end_headers()
    do_GET = do_POST
    def log_message(self, *a): pass
class S(http.server.HTTPServer):
    address_family = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
s = S((sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0), H)
sys.stdout.write('port %d\n' % s.server_address[1]); sys.stdout.flush()
s.serve_forever()
