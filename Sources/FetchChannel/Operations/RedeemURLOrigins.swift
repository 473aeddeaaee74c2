import DeviceSigning
import Foundation

/// The ``BackendOrigin`` of a redeem URL's text, remembered: a backend hands out the same few
/// redeem URLs in every answer, and parsing one (`URL`, then `URLComponents`) costs more than the
/// rest of checking an operation. Both places that need it per fetch, the origin check
/// (``RedeemOriginCheck``) and the identity of each operation (``RedemptionIdentity``), ask here.
///
/// A pure function of the text, so a remembered answer is never stale. Bounded: when
/// ``capacity`` texts are held, all are forgotten and the next ones are parsed again.
enum RedeemURLOrigins {
    static let capacity = 64

    private static let remembered = Locked<[ExactText: BackendOrigin?]>([:])

    /// The origin of `text` as a URL; nil when it is not a URL or ``BackendOrigin`` refuses it,
    /// and for a text longer than a redeem URL may be, which is neither parsed nor remembered (the
    /// table would otherwise hold up to ``capacity`` texts of any size a caller passes).
    static func origin(of text: String) -> BackendOrigin? {
        guard text.utf8.count <= PendingOutOfBandOperation.RedeemData.maximumRedeemURLBytes else { return nil }
        let key = ExactText(text: text)
        if let known = remembered.withLock({ $0[key] }) { return known }
        let origin = URL(string: text).flatMap(BackendOrigin.init(url:))
        remembered.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[key] = origin
        }
        return origin
    }

    /// Whether `text`'s origin is remembered now (for tests).
    static func isRemembered(_ text: String) -> Bool {
        remembered.withLock { $0[ExactText(text: text)] != nil }
    }

    /// A text compared by its UTF-8 bytes. Swift strings compare up to canonical equivalence, but
    /// `URL(string:)` reads bytes: two spellings of one string may be two different URLs. The key
    /// of every table of redeem URLs.
    struct ExactText: Hashable {
        let text: String

        static func == (a: ExactText, b: ExactText) -> Bool {
            // withUTF8 may make a bridged string native: on copies.
            var (a, b) = (a.text, b.text)
            return a.withUTF8 { first in
                b.withUTF8 { second in
                    guard first.count == second.count else { return false }
                    guard let x = first.baseAddress, let y = second.baseAddress else { return true }  // both empty
                    return memcmp(x, y, first.count) == 0
                }
            }
        }

        func hash(into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }
}
