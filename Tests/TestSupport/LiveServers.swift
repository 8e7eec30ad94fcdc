import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Servers for the live-output tests, on the loopback interface and free ports, started and
/// stopped by the test: nginx with the RTMP module, and readiness checks for any listener.
public enum Loopback {
    /// A port nothing listens on now (the kernel's pick for a socket bound to port 0).
    public static func freePort(udp: Bool = false) throws -> UInt16 {
        let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError.failed("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestError.failed("bind: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// A TCP listener on 127.0.0.1 that accepts connections (the kernel's backlog) and never
    /// answers: the caller closes `fd`.
    public static func silentListener(backlog: Int32 = 16) throws -> (fd: Int32, port: UInt16) {
        let port = try freePort()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError.failed("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let listening = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        } && listen(fd, backlog) == 0
        guard listening else { close(fd); throw TestError.failed("cannot listen on 127.0.0.1:\(port)") }
        return (fd, port)
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted now.
    public static func acceptsTCP(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Whether a UDP socket is bound to 127.0.0.1:`port` (an SRT listener), from /proc/net/udp.
    public static func hasUDPListener(port: UInt16) -> Bool {
        let table = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
        return table.contains(String(format: "0100007F:%04X", port))
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` seconds pass.
    @discardableResult
    public static func poll(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}

/// nginx with the RTMP module (Debian's nginx-light + libnginx-mod-rtmp), one process
/// (`master_process off`, so stopping it leaves no worker behind), on 127.0.0.1:`port`,
/// application `live`, recording every stream to `directory/NAME.flv` (`record all`): what
/// the server received, for an independent check; and HTTP on `httpPort` serving
/// `directory` (HLS read back as a player would).
public final class NginxRTMPServer {
    public let port: UInt16
    public let httpPort: UInt16
    public let directory: URL
    private var process: ChildProcess?

    public static var available: Bool {
        Proc.which("nginx") != nil && FileManager.default.fileExists(atPath: "/usr/lib/nginx/modules/ngx_rtmp_module.so")
    }

    public init(directory: URL) throws {
        self.directory = directory
        port = try Loopback.freePort()
        httpPort = try Loopback.freePort()
        let d = directory.path
        let config = """
        load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
        daemon off; master_process off; pid \(d)/nginx.pid; error_log \(d)/error.log;
        events { worker_connections 64; }
        rtmp { server { listen 127.0.0.1:\(port);
          application live { live on; record all; record_path \(d); record_unique off; } } }
        http { access_log off; client_body_temp_path \(d)/tmp; proxy_temp_path \(d)/tmp;
          types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; video/iso.segment m4s; video/mp4 mp4; }
          server { listen 127.0.0.1:\(httpPort); root \(d); } }
        """
        try config.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        chmod(d, 0o777)
    }

    /// Starts nginx and waits (at most 10 s) until it accepts connections.
    public func start() throws {
        let d = directory.path
        let child = try Proc.spawn("nginx", ["-c", "\(d)/nginx.conf", "-p", d])
        process = child
        guard Loopback.poll(timeout: 10, { Loopback.acceptsTCP(port: port) || child.exited() != nil }),
              child.exited() == nil else {
            let log = (try? String(contentsOfFile: "\(d)/error.log", encoding: .utf8)) ?? ""
            stop()
            throw TestError.failed("nginx did not start on port \(port): \(log)")
        }
    }

    /// Stops nginx (SIGTERM, then SIGKILL after 5 s) and reaps it.
    public func stop() {
        guard let child = process else { return }
        process = nil
        child.signal(SIGCONT)
        child.signal(SIGTERM)
        child.wait(timeout: 5)
    }

    /// Sends `sig` to nginx (SIGSTOP freezes it: connections stay open, nothing is read).
    public func signal(_ sig: Int32) { process?.signal(sig) }

    /// The file nginx recorded for stream `name`.
    public func recording(_ name: String) -> URL { directory.appendingPathComponent("\(name).flv") }

    deinit { stop() }
}
