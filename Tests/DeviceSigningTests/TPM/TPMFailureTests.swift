internal import COpenSSL
import Foundation
import Testing

@testable import DeviceSigning

/// How a TPM error on OpenSSL's queue is read (no TPM needed: the tests put the provider's kind
/// of entry there themselves).
@Suite struct TPMFailureTests {
    /// Puts an error of library `library` with `data` on this thread's queue, as a provider does.
    /// A nil `file` leaves the source position out, as tpm2-openssl does.
    private static func raise(
        library: Int32, data: String?, reason: Int32 = 13, file: String? = "TPMFailureTests"
    ) {
        ERR_new()
        if let file { ERR_set_debug(file, 1, "raise") }
        withVaList([]) { ERR_vset_error(library, reason, data, $0) }
    }

    /// tpm2-openssl's "authorization failure" (its reason 2, raised without a source position)
    /// is the TPM's refusal whatever library number the provider's errors carry. After 128
    /// provider loads in one process the number is 0 and OpenSSL has no text for it: the error
    /// read "lib(0)::reason(2)", and loading a good key under an owner password was called a
    /// garbled key file (which could have a person delete it).
    @Test(arguments: [Int32(0), Int32(ERR_LIB_USER), Int32(200)])
    func theProvidersAuthorizationFailureIsARefusalWhateverItsLibraryNumber(library: Int32) {
        ERR_clear_error()
        Self.raise(library: library, data: nil, reason: 2, file: nil)
        let error = TPMFailure.error("load the key", target: "TCTI \"swtpm:host=127.0.0.1,port=9\"", loadingKey: true)
        #expect(error.code == .tpmRefused, "\(error)")
        #expect(error.reason.contains("authorization failure"), "\(error.reason)")
        // The same reason from OpenSSL's own code (which gives its position) is not the provider's.
        Self.raise(library: library, data: nil, reason: 2, file: "crypto/evp/evp_fetch.c")
        #expect(TPMFailure.error("load the key", target: "t", loadingKey: true).code != .tpmRefused)
        #expect(ERR_peek_error() == 0)
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
