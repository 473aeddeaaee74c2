import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

/// The client's signers are found again by key source and dispatch target, never by one alone.
@Suite struct SignerCacheTests {
    private static let server = URL(string: "https://backend.example/nevisfido")!

    private static func registration(_ source: SigningKeySource, target: String) -> FetchRegistration {
        FetchRegistration(server: server, deviceId: "device", dispatchTargetId: target, signingKey: source)
    }

    /// The header's `kid` and whether the signature verifies with `key`.
    private static func signed(
        by cache: SignerCache, _ registration: FetchRegistration, checkedWith key: P256.Signing.PublicKey
    ) throws -> (kid: String?, verifies: Bool) {
        let jws = try CompactJWS(parsing: try cache.signer(for: registration).headerValue())
        return (jws.header.kid, (try? jws.verifiedPayload(with: key)) != nil)
    }

    @Test func eachKeyAndDispatchTargetSignsForItself() throws {
        let cache = SignerCache(clock: ManualWallClock(millis: 1_700_000_000_000))
        let (keyA, keyB) = (try P256.Signing.PrivateKey(), try P256.Signing.PrivateKey())
        let (sourceA, sourceB) = (SigningKeySource(keyA), SigningKeySource(keyB))
        for _ in 0..<2 {  // made, then found again
            let a1 = try Self.signed(
                by: cache, Self.registration(sourceA, target: "target-1"), checkedWith: keyA.publicKey)
            let a2 = try Self.signed(
                by: cache, Self.registration(sourceA, target: "target-2"), checkedWith: keyA.publicKey)
            let b1 = try Self.signed(
                by: cache, Self.registration(sourceB, target: "target-1"), checkedWith: keyB.publicKey)
            #expect(a1.kid == "target-1" && a1.verifies)
            #expect(a2.kid == "target-2" && a2.verifies)
            #expect(b1.kid == "target-1" && b1.verifies)
        }
    }

    @Test func moreRegistrationsThanEntriesStillSignCorrectly() throws {
        let cache = SignerCache(clock: ManualWallClock(millis: 1_700_000_000_000))
        let keys = try (0...SignerCache.capacity).map { _ in try P256.Signing.PrivateKey() }
        let sources = keys.map(SigningKeySource.init)
        for round in 0..<2 {
            for (index, key) in keys.enumerated() {
                let result = try Self.signed(
                    by: cache, Self.registration(sources[index], target: "t\(index)"), checkedWith: key.publicKey)
                #expect(result.kid == "t\(index)" && result.verifies, "round \(round), registration \(index)")
            }
        }
    }

    @Test func aKeyThatFailedToLoadIsTriedAgain() throws {
        struct Unavailable: Error {}
        let key = try P256.Signing.PrivateKey()
        let attempts = Locked(0)
        let source = SigningKeySource(label: "flaky") {
            let attempt = attempts.withLock { count -> Int in
                count += 1
                return count
            }
            guard attempt > 1 else { throw Unavailable() }
            return key
        }
        let cache = SignerCache(clock: ManualWallClock(millis: 1_700_000_000_000))
        #expect(throws: Unavailable.self) { try cache.signer(for: Self.registration(source, target: "t")) }
        #expect(try Self.signed(by: cache, Self.registration(source, target: "t"), checkedWith: key.publicKey).verifies)
    }
}
