internal import COpenSSL

/// Reads and clears OpenSSL's thread-local error queue.
enum OpenSSLErrorQueue {
    /// The queued errors as text, oldest first; the queue is empty afterwards.
    static func drain() -> [String] {
        var errors: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = buffer.withUnsafeBufferPointer { pointer -> String in
                let bytes = pointer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
                return String(decoding: bytes, as: UTF8.self)
            }
            errors.append(text)
        }
        return errors
    }

    /// Discards whatever is queued (after an expected failure, so it does not leak into a later error).
    static func clear() {
        ERR_clear_error()
    }

    /// A DeviceSigningError carrying the drained queue.
    static func error(_ code: DeviceSigningError.Code, _ reason: String) -> DeviceSigningError {
        DeviceSigningError(code, reason, openSSLErrors: drain())
    }
}
