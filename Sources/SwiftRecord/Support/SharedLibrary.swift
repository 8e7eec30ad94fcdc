#if canImport(Glibc)
import Glibc
#endif

/// A shared library opened when something first needs it (`dlopen`) instead of linked into
/// every run: what only one source uses stays out of start-up (`swift-record --help` loads
/// no library a camera alone needs). Opened once and never closed, so the functions looked
/// up in it stay valid for the life of the process.
package struct SharedLibrary: @unchecked Sendable {  // the handle is never closed or changed
    /// The file name asked for, e.g. "libavdevice.so.59".
    package let name: String
    private let handle: UnsafeMutableRawPointer

    /// Opens `name` (a file name found the dynamic loader's way, or a path). `purpose` says
    /// what needs it, for the error a missing library gives: "cannot load libavdevice.so.59,
    /// which V4L2 cameras are read through: … (the dynamic loader's reason)".
    package init(_ name: String, purpose: String, operation: String) throws(SwiftRecordError) {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            throw SwiftRecordError(.unsupported, operation: operation,
                                   message: "cannot load \(name), \(purpose): \(SharedLibrary.lastError())")
        }
        self.name = name
        self.handle = handle
    }

    /// The address of the function `symbol`, to be cast to its C type by the caller; an
    /// error naming the library when it has no such function (another version of it).
    package func function(_ symbol: String, operation: String) throws(SwiftRecordError) -> UnsafeMutableRawPointer {
        _ = dlerror()
        guard let address = dlsym(handle, symbol) else {
            throw SwiftRecordError(.unsupported, operation: operation,
                                   message: "\(name) has no function \(symbol): \(SharedLibrary.lastError())")
        }
        return address
    }

    /// Checks that a library opened by C stubs (Sources/CSharedLibrary: libpulse, libpipewire,
    /// sd-bus) could be loaded: `load` is its `sr_…_load`, which opens it once per process and
    /// returns nil, or the reason it could not. The same error as `init` when it could not.
    package static func require(_ name: String, purpose: String, operation: String,
                                load: () -> UnsafePointer<CChar>?) throws(SwiftRecordError) {
        if let reason = load() {
            throw SwiftRecordError(.unsupported, operation: operation, message: "cannot load \(name), \(purpose): \(String(cString: reason))")
        }
    }

    private static func lastError() -> String {
        dlerror().map { String(cString: $0) } ?? "unknown reason"
    }
}
