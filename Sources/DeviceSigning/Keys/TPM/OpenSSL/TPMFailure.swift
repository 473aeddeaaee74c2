internal import CDeviceSigningShim

/// Turns a failed TPM operation (this thread's OpenSSL error queue) into a `DeviceSigningError`
/// a person can act on: which TPM was tried, and whether it could not be reached, refused, or
/// cannot load a key another TPM made.
///
/// tpm2-openssl reports a TSS2 return code in its error data; its layer tells the cases apart:
/// the transport (TCTI), resource manager, driver and ESAPI layers mean the TPM could not be used
/// at all; the TPM layer means it answered and refused. TPM_RC_INTEGRITY on loading means the
/// key blob was not made under this TPM's storage seed, and TPM_RC_HANDLE for the first handle
/// that its parent is not there: neither is the TPM's refusal of a key it could load. While a key is loaded, the marshalling
/// layer (and ESAPI's bad-value code) means the key file holds what cannot be encoded for the
/// TPM: the file's fault, which must not mark the connection that other keys share as failed.
enum TPMFailure {
    /// A TSS2 return code (TSS2_RC): the layer is in bits 16-23.
    struct ReturnCode: Hashable, CustomStringConvertible {
        let value: UInt32
        var layer: UInt32 { (value >> 16) & 0xFF }
        /// The TPM answered (the TPM layer); every other layer is the software between.
        var isFromTPM: Bool { layer == 0 }
        /// TPM_RC_INTEGRITY: a format-one code (bit 7) with error number 0x1F.
        var isIntegrityFailure: Bool { isFromTPM && value & 0x80 != 0 && value & 0x3F == 0x1F }
        /// The marshalling layer (9), or ESAPI's TSS2_ESYS_RC_BAD_VALUE (0x7000B): a value the
        /// library could not encode or decode.
        var isBadValue: Bool { layer == 9 || value == 0x7_000B }
        /// TPM_RC_HANDLE for the first handle (0x18B): loading, the parent is not in the TPM.
        var isFirstHandleWrong: Bool { isFromTPM && value & 0xFFF == 0x18B }
        /// The TPM no longer holds what a loaded key's operation names: TPM_RC_INITIALIZE (0x100,
        /// reset and not started again), TPM_RC_HANDLE for the first handle (0x18B) or
        /// TPM_RC_REFERENCE_H0...S6 (0x910...0x91E, a transient object or session not loaded).
        var isLoadedObjectGone: Bool {
            isFromTPM && (value & 0xFFF == 0x100 || value & 0xFFF == 0x18B || (0x910...0x91E).contains(value & 0xFFF))
        }
        /// TPM_RC_OBJECT_MEMORY (0x902): no room for another loaded object.
        var isObjectMemoryFull: Bool { isFromTPM && value & 0xFFF == 0x902 }
        var description: String { "0x" + String(value, radix: 16, uppercase: true) }
    }

    /// The drained queue: every entry's text, and the first TSS2 return code with its words.
    struct Queue {
        var texts: [String] = []
        /// The reason codes of the entries tpm2-openssl raised (``providerAuthorizationFailure``).
        var providerReasons: [Int32] = []
        var returnCode: ReturnCode?
        var detail: String?

        /// The return code with tss2's words for it.
        func words(_ code: ReturnCode) -> String {
            detail.map { "\($0), TSS2 code \(code)" } ?? "TSS2 code \(code)"
        }
    }

    static func drain() -> Queue {
        var queue = Queue()
        var text = [CChar](repeating: 0, count: 512)
        var detail = [CChar](repeating: 0, count: 256)
        var code: UInt32 = 0
        var hasCode: Int32 = 0
        var providerReason: Int32 = -1
        while dss_tpm_pop_error(&text, text.count, &detail, detail.count, &code, &hasCode, &providerReason) == 1 {
            queue.texts.append(string(text))
            if providerReason >= 0 { queue.providerReasons.append(providerReason) }
            if hasCode == 1 && queue.returnCode == nil {
                queue.returnCode = ReturnCode(value: code)
                let words = string(detail)
                queue.detail = words.isEmpty ? nil : words
            }
        }
        return queue
    }

    /// tpm2-openssl's reason code for "authorization failure" (TPM2_ERR_AUTHORIZATION_FAILURE).
    static let providerAuthorizationFailure: Int32 = 2

    /// The error for a failed `action` (a phrase such as "sign" or "load the key") on the TPM
    /// reached through `target`. `withLoadedKey`: the action used a key loaded earlier (a
    /// signature, a key agreement); when the TPM no longer holds it (a reset, a restart, a resume
    /// from hibernation), the connection is as good as lost: `.tpmUnavailable`, which makes the
    /// next operation load the key again (``TPMKeyHandle``) rather than fail the same way forever.
    static func error(_ action: String, target: String, loadingKey: Bool = false, withLoadedKey: Bool = false)
        -> DeviceSigningError
    {
        let queue = drain()
        // tpm2-openssl says so without a TSS2 code when the parent's (the owner hierarchy's)
        // authorization fails: the TPM refused, the key file is not at fault. Known by its reason
        // code, since its text is missing once the provider's library number has wrapped.
        if queue.returnCode == nil,
            queue.providerReasons.contains(Self.providerAuthorizationFailure)
                || queue.texts.contains(where: { $0.contains("authorization failure") })
        {
            return DeviceSigningError(
                .tpmRefused,
                "The TPM reached through \(target) refused to \(action): authorization failure. Its owner "
                    + "hierarchy, under which this package makes and loads keys, has an authorization value, "
                    + "which this package does not supply; remove it (tpm2_changeauth -c owner -p OLD) or use "
                    + "a TPM without one.", openSSLErrors: queue.texts)
        }
        guard let code = queue.returnCode else {
            return DeviceSigningError(
                .openSSLFailure, "Could not \(action) with the TPM reached through \(target).",
                openSSLErrors: queue.texts)
        }
        let words = queue.words(code)
        if loadingKey && code.isBadValue {
            return DeviceSigningError(
                .malformedEncoding,
                "The TPM key file cannot be loaded (\(words)): it is damaged, or uses a form this package does "
                    + "not support.", openSSLErrors: queue.texts)
        }
        if withLoadedKey && code.isLoadedObjectGone {
            return DeviceSigningError(
                .tpmUnavailable,
                "Could not \(action): the TPM reached through \(target) no longer holds the loaded key (\(words)); "
                    + "it was reset or restarted since. The next operation loads the key into it again.",
                openSSLErrors: queue.texts)
        }
        if !code.isFromTPM {
            return DeviceSigningError(
                .tpmUnavailable,
                "Could not \(action): no usable TPM through \(target) "
                    + "(\(words)). " + checkHint, openSSLErrors: queue.texts)
        }
        if loadingKey && code.isIntegrityFailure {
            return DeviceSigningError(
                .tpmKeyForeign,
                "This key belongs to another TPM: the TPM reached through "
                    + "\(target) cannot load it (\(words)). It was made by a different TPM, this TPM was cleared since, "
                    + "or the key file was damaged. Use the TPM that made it, or generate and register a new key on "
                    + "this device.", openSSLErrors: queue.texts)
        }
        if loadingKey && code.isFirstHandleWrong {
            return DeviceSigningError(
                .tpmKeyForeign,
                "The TPM reached through \(target) cannot load this key under the parent key the file names "
                    + "(\(words)): that persistent key is not in this TPM, or cannot be a parent. Use the TPM that "
                    + "holds it, or generate and register a new key on this device.", openSSLErrors: queue.texts)
        }
        var reason = "The TPM reached through \(target) refused to \(action) (\(words))."
        if code.isObjectMemoryFull {
            reason +=
                " It has no room for another loaded key: without a resource manager (such as /dev/tpmrm0) a "
                + "TPM holds only a few at a time; release keys no longer in use. Keys that processes which "
                + "ended (or gave up waiting) left loaded stay there until the TPM is flushed or restarted."
        }
        return DeviceSigningError(.tpmRefused, reason, openSSLErrors: queue.texts)
    }

    private static let checkHint =
        "Check that the TPM (or swtpm) is running and that "
        + "\(TPMConfiguration.tctiVariable) names it, for example device:/dev/tpmrm0."

    /// The error when the provider could not be loaded at all.
    static func connectError(target: String) -> DeviceSigningError {
        if dss_tpm_provider_installed() != 1 {
            OpenSSLErrorQueue.clear()
            return DeviceSigningError(
                .tpmUnavailable,
                "OpenSSL's tpm2 provider is not installed (Debian package "
                    + "tpm2-openssl; OpenSSL looks for tpm2.so in its modules directory or $OPENSSL_MODULES), so no TPM "
                    + "key can be used.")
        }
        let queue = drain()
        let words = queue.returnCode.map(queue.words) ?? queue.texts.last ?? "no detail"
        return DeviceSigningError(
            .tpmUnavailable, "No TPM answered through \(target) (\(words)). " + checkHint,
            openSSLErrors: queue.texts)
    }

    private static func string(_ buffer: [CChar]) -> String {
        buffer.withUnsafeBufferPointer { pointer in
            String(decoding: pointer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
