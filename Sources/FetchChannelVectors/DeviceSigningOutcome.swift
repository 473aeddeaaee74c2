import DeviceSigning
import Foundation

/// What a JOSE call under test gave (`CompactJWS` verifying, `JWE` decrypting): the bytes it
/// produced, or the `DeviceSigningError` code it failed with, which is what a negative vector
/// names as its expected error.
enum DeviceSigningOutcome {
    case success(Data)
    case failure(String)

    /// Runs `body` and keeps its bytes, or the code of its `DeviceSigningError` (any other error
    /// is a failure that no vector expects).
    init(_ body: () throws -> Data) {
        do {
            self = .success(try body())
        } catch let error as DeviceSigningError {
            self = .failure(error.code.rawValue)
        } catch {
            self = .failure("unexpected \(error)")
        }
    }
}
