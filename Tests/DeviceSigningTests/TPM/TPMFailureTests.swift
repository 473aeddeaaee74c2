internal import COpenSSL
import Foundation
import Testing

@testable import DeviceSigning

/// How a TPM error on OpenSSL's queue is read (no TPM needed: the tests put the provider's kind
/// of entry there themselves).
@Suite struct TPMFailureTests {
    /// Puts an error of library `library` with `data` on this thread's queue, as a provider does.
    private static func raise(library: Int32, data: String) {
        ERR_new()
        ERR_set_debug("TPMFailureTests", 1, "raise")
        withVaList([]) { ERR_vset_error(library, 13, data, $0) }
    }

    /// Each provider load takes the next error library number, and the packed code keeps 8 bits
    /// of it: after 128 loads in one process the tpm2 provider's errors carry the numbers of
    /// OpenSSL's own libraries (3 here). They used to lose their TSS2 code, so a TPM that stopped
    /// was an OpenSSL failure (a decryption error, a garbled key file) instead of tpmUnavailable.
    @Test(arguments: [Int32(3), Int32(ERR_LIB_USER), Int32(200)])
    func theTSS2CodeIsReadWhateverTheProvidersLibraryNumber(library: Int32) {
        ERR_clear_error()
        Self.raise(library: library, data: "655370 tcti:IO failure")
        let error = TPMFailure.error("sign", target: "TCTI \"swtpm:host=127.0.0.1,port=9\"")
        #expect(error.code == .tpmUnavailable, "\(error)")
        #expect(error.reason.contains("tcti:IO failure, TSS2 code 0xA000A"), "\(error.reason)")
        #expect(ERR_peek_error() == 0)
    }

    @Test(arguments: [
        "655370", "655370 ", "655370 IO failure", "x655370 tcti:IO", "99999999999 tcti:x", "655370 :x",
        "0 tpm:success", "4294967296 tcti:x", "-1 tcti:x", " 655370 tcti:x", "+655370 tcti:x",
    ])
    func dataThatIsNotATSS2CodeIsNotReadAsOne(data: String) {
        ERR_clear_error()
        Self.raise(library: Int32(ERR_LIB_USER), data: data)
        let queue = TPMFailure.drain()
        #expect(queue.returnCode == nil, "\(data) read as \(String(describing: queue.returnCode))")
        #expect(queue.texts.count == 1)
    }
}
