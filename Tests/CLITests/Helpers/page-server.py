#!/usr/bin/env python3
"""The HLS browser test's page server: serves FOLDER on 127.0.0.1 at a free port, writes the
port to PORT_FILE once listening, and writes the body of a POST to /result to RESULT_FILE
(atomically, so the test never reads half of it).

Usage: page-server.py FOLDER RESULT_FILE PORT_FILE
"""
import functools
import http.server
import os
import sys

folder, result_file, port_file = sys.argv[1:4]


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/result":
            with open(result_file + ".tmp", "wb") as f:
                f.write(body)
            os.replace(result_file + ".tmp", result_file)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=folder))
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
