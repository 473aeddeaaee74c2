import Foundation

/// Checks `Device-Signature` header values as the backend does: the reference implementation the
/// emulator uses.
///
/// Checks, in order; the first that fails decides the rejection:
/// 1. sizes: header value ≤ 16 KiB, protected header JSON ≤ 1 KiB, payload JSON ≤ 4 KiB; then a
///    strict compact-JWS parse (`CompactJWS`): three parts of strict base64url, `alg` exactly
///    "ES256", a 64-byte r||s signature → `.malformed`. `alg` "none", "HS256" or anything else is
///    `.malformed` (MALFORMED_REQUEST), not `.invalidSignature`: such a value is not a
///    Device-Signature at all, and INVALID_SIGNATURE would tell the client to register again.
/// 2. `typ`, when present, exactly "JWT"; `kid` present and a valid dispatch target id → `.malformed`.
/// 3. a key registered for the `kid` → `.unknownDispatchTarget`.
/// 4. the signature → `.invalidSignature`. Nothing in the payload is trusted before this.
/// 5. the payload: a JSON object with `dispatchTargetId` (a string equal to `kid`), `requestId`
///    (a string of 1...64 UTF-16 code units) and `creationTimeInEpochMillis` (an integer)
///    → `.malformed`.
/// 6. freshness: `|now - creationTime| <= tolerance` (exactly at the tolerance is accepted, both
///    ways) → `.clockSkewTooBig`.
/// 7. replay: the request id, per dispatch target, not accepted before within its window
///    → `.replayedRequest`; the dispatch target holding its quota of live request ids
///    → `.replayQuotaExceeded` (other dispatch targets are unaffected); or the replay cache full
///    of live entries → `.replayCacheFull`.
///
/// Replay window: an accepted request is remembered until `max(creationTime, now) + tolerance`.
/// The same signed value is fresh only until `creationTime + tolerance`, so it can never be
/// replayed; and because the expiry is never earlier than `now + tolerance`, a creation time
/// skewed into the past does not shorten how long the request id stays blocked. The arithmetic
/// saturates, so hostile creation times (Int64.min, Int64.max) neither trap nor wrap.
/// When the verifier's clock is set back, a request whose id may already have been dropped from
/// the cache (its `creationTime + tolerance` is not after the latest expiry dropped) is refused
/// as `.replayedRequest`: the cache can no longer tell, and a replay must not get through.
///
/// Thread-safe: the replay cache is behind a lock, and reading the clock, the freshness check
/// and the check-and-record of a request id are one critical section, so concurrent
/// verifications accept each request id exactly once. (With the clock read before the lock, a
/// request that read the time just before another one dropped its expired entry could record it
/// again and be accepted twice.) Signature verification runs outside the lock.
public final class DeviceSignatureVerifier: Sendable {
    /// Finds the public key registered for a dispatch target, or nil.
    public typealias KeyLookup = @Sendable (_ dispatchTargetId: String) -> P256.Signing.PublicKey?

    public static let defaultToleranceMillis: Int64 = 60_000
    public static let defaultReplayCacheCapacity = 100_000
    public static let defaultReplayQuotaPerDispatchTarget = 1_000

    /// The largest accepted `|now - creationTime|`, in milliseconds.
    public let toleranceMillis: Int64
    /// The most request ids remembered at once.
    public let replayCacheCapacity: Int
    /// The most request ids remembered at once for one dispatch target.
    public let replayQuotaPerDispatchTarget: Int

    private let clock: any WallClock
    private let keyLookup: KeyLookup
    private let replayCache: Locked<ReplayCache>
    /// The key an unknown dispatch target's signature is checked against, so that the time taken
    /// is a known target's: the group's generator G (the public key of the scalar 1). The
    /// verifier's own, not a process-wide one made on first use.
    private let standInKey: P256.Signing.PublicKey?

    /// - Parameters:
    ///   - toleranceMillis: the clock-skew tolerance, ≥ 0 (default 60 s).
    ///   - clock: the server clock.
    ///   - replayCacheCapacity: ≥ 1 (default 100,000). Each accepted request id stays for at most
    ///     two tolerances, so the default sustains about 830 requests/s at the default tolerance;
    ///     beyond that, new requests get `.replayCacheFull` rather than a replay hole.
    ///   - replayQuotaPerDispatchTarget: ≥ 1 (default 1,000): the share of the cache one dispatch
    ///     target may hold, about 8 requests/s at the default tolerance; beyond it, that dispatch
    ///     target's new requests get `.replayQuotaExceeded`.
    ///   - keyLookup: the key registered for a dispatch target id.
    /// - Throws: `DeviceSigningError` `.invalidConfiguration`.
    public init(
        toleranceMillis: Int64 = DeviceSignatureVerifier.defaultToleranceMillis,
        clock: any WallClock,
        replayCacheCapacity: Int = DeviceSignatureVerifier.defaultReplayCacheCapacity,
        replayQuotaPerDispatchTarget: Int = DeviceSignatureVerifier.defaultReplayQuotaPerDispatchTarget,
        keyLookup: @escaping KeyLookup
    ) throws {
        guard toleranceMillis >= 0 else {
            throw DeviceSigningError(
                .invalidConfiguration, "The clock-skew tolerance must not be negative; got \(toleranceMillis) ms.")
        }
        guard replayCacheCapacity >= 1 else {
            throw DeviceSigningError(
                .invalidConfiguration, "The replay cache capacity must be at least 1; got \(replayCacheCapacity).")
        }
        guard replayQuotaPerDispatchTarget >= 1 else {
            throw DeviceSigningError(
                .invalidConfiguration,
                "The replay quota per dispatch target must be at least 1; "
                    + "got \(replayQuotaPerDispatchTarget).")
        }
        self.toleranceMillis = toleranceMillis
        self.replayCacheCapacity = replayCacheCapacity
        self.replayQuotaPerDispatchTarget = replayQuotaPerDispatchTarget
        self.clock = clock
        self.keyLookup = keyLookup
        standInKey = try? P256.Signing.PublicKey(x963Representation: Self.generatorPoint())
        self.replayCache = Locked(
            ReplayCache(
                capacity: replayCacheCapacity,
                quotaPerDispatchTarget: replayQuotaPerDispatchTarget))
    }

    /// Forgets every request id, and what was dropped: for a clock that was set on purpose (the
    /// reference backend's), whose entries and cut-off were made on the old time. Moved back, they
    /// refused every fresh request as replayed until the clock caught up, and held each dispatch
    /// target's quota as long. A request accepted before may then be accepted once more while it
    /// is within the tolerance of the new time.
    package func forgetRequestIds() {
        replayCache.withLock { cache in
            cache = ReplayCache(capacity: cache.capacity, quotaPerDispatchTarget: cache.quotaPerDispatchTarget)
        }
    }

    /// The number of request ids currently remembered (expired ones may linger until the next
    /// verification).
    public var replayCacheCount: Int {
        replayCache.withLock { $0.count }
    }

    /// The P-256 generator G, uncompressed (SEC 2 §2.4.2). A function, not a stored constant: a
    /// process-wide value made on first use would stay allocated for good.
    static func generatorPoint() -> [UInt8] {
        [
            0x04, 0x6B, 0x17, 0xD1, 0xF2, 0xE1, 0x2C, 0x42, 0x47, 0xF8, 0xBC, 0xE6, 0xE5, 0x63, 0xA4, 0x40, 0xF2,
            0x77, 0x03, 0x7D, 0x81, 0x2D, 0xEB, 0x33, 0xA0, 0xF4, 0xA1, 0x39, 0x45, 0xD8, 0x98, 0xC2, 0x96,
            0x4F, 0xE3, 0x42, 0xE2, 0xFE, 0x1A, 0x7F, 0x9B, 0x8E, 0xE7, 0xEB, 0x4A, 0x7C, 0x0F, 0x9E, 0x16,
            0x2B, 0xCE, 0x33, 0x57, 0x6B, 0x31, 0x5E, 0xCE, 0xCB, 0xB6, 0x40, 0x68, 0x37, 0xBF, 0x51, 0xF5,
        ]
    }

    /// Verifies a `Device-Signature` header value and, if it is accepted, records its request id.
    public func verify(_ headerValue: String) -> Result<VerifiedDeviceSignature, DeviceSignatureRejection> {
        if let problem = Self.sizeProblem(headerValue) {
            return .failure(.malformed(reason: problem))
        }
        let jws: CompactJWS
        do {
            jws = try CompactJWS(parsing: headerValue)
        } catch let error as DeviceSigningError {
            return .failure(.malformed(reason: error.reason))
        } catch {
            return .failure(.malformed(reason: "The Device-Signature is not a compact JWS."))
        }
        if let typ = jws.header.typ, typ != "JWT" {
            return .failure(
                .malformed(reason: "The JWS typ is \"\(typ.prefix(32))\"; a Device-Signature has typ \"JWT\"."))
        }
        guard let kid = jws.header.kid else {
            return .failure(
                .malformed(reason: "The JWS header has no kid; a Device-Signature names its dispatch target in kid."))
        }
        if let problem = DeviceSignatureLimits.dispatchTargetIdProblem(kid) {
            return .failure(.malformed(reason: "The JWS kid is not a dispatch target id: " + problem))
        }
        guard let key = keyLookup(kid) else {
            // Checked against a stand-in key all the same (the outcome is dropped), so that the
            // time taken does not tell an unknown dispatch target from a known one whose
            // signature fails: the wire answer is the same for both.
            if let standIn = standInKey { _ = try? jws.verifiedPayload(with: standIn) }
            return .failure(.unknownDispatchTarget(kid))
        }
        guard let payloadJSON = try? jws.verifiedPayload(with: key) else {
            return .failure(.invalidSignature)
        }
        let payload: DeviceSignaturePayload
        switch DeviceSignaturePayload.decode(payloadJSON) {
        case .success(let decoded): payload = decoded
        case .failure(let rejection): return .failure(rejection)
        }
        // Byte equality: Swift's `==` on String would also match canonically equivalent ids.
        guard payload.dispatchTargetId.utf8.elementsEqual(kid.utf8) else {
            return .failure(
                .malformed(
                    reason:
                        "The payload's dispatchTargetId is not the JWS kid; both must name the same dispatch target."))
        }
        if let problem = DeviceSignatureLimits.requestIdProblem(payload.requestId) {
            return .failure(.malformed(reason: problem))
        }
        let cacheKey = ReplayCache.Key(dispatchTargetId: kid, requestId: payload.requestId)
        return replayCache.withLock { cache in
            // Under the lock, so the time never goes backwards from one check-and-record to the next.
            let now = clock.nowMillis()
            return record(cacheKey, creationTime: payload.creationTimeInEpochMillis, now: now, in: &cache)
        }
    }

    /// Steps 6 and 7: freshness, then the replay cache. Called with the cache's lock held.
    private func record(
        _ key: ReplayCache.Key, creationTime: Int64, now: Int64,
        in cache: inout ReplayCache
    ) -> Result<VerifiedDeviceSignature, DeviceSignatureRejection> {
        guard Self.isFresh(creationTime: creationTime, now: now, tolerance: toleranceMillis) else {
            return .failure(.clockSkewTooBig(serverTimeMillis: now, creationTimeMillis: creationTime))
        }
        let expiry = Self.replayExpiry(creationTime: creationTime, now: now, tolerance: toleranceMillis)
        // The expiry had it been accepted when its creation time was the server's time.
        let earliestExpiry = Self.replayExpiry(
            creationTime: creationTime, now: creationTime, tolerance: toleranceMillis)
        switch cache.insert(key, expiry: expiry, earliestExpiry: earliestExpiry, now: now) {
        case .inserted:
            return .success(
                VerifiedDeviceSignature(
                    dispatchTargetId: key.dispatchTargetId, requestId: key.requestId,
                    creationTimeMillis: creationTime, serverTimeMillis: now))
        case .replayed:
            return .failure(.replayedRequest(key.requestId))
        case .quotaExceeded(let retryAfterMillis):
            let seconds = retryAfterMillis / 1000 + (retryAfterMillis % 1000 == 0 ? 0 : 1)
            return .failure(.replayQuotaExceeded(quota: replayQuotaPerDispatchTarget, retryAfterSeconds: seconds))
        case .full:
            return .failure(.replayCacheFull(capacity: replayCacheCapacity))
        }
    }

    /// `|now - creationTime| <= tolerance`, without overflow for any Int64 inputs.
    static func isFresh(creationTime: Int64, now: Int64, tolerance: Int64) -> Bool {
        let (difference, overflow) = now.subtractingReportingOverflow(creationTime)
        // An overflowing difference is larger in magnitude than Int64.max >= tolerance.
        return !overflow && difference.magnitude <= UInt64(tolerance)
    }

    /// `max(creationTime, now) + tolerance`, saturating at Int64.max.
    static func replayExpiry(creationTime: Int64, now: Int64, tolerance: Int64) -> Int64 {
        let (expiry, overflow) = max(creationTime, now).addingReportingOverflow(tolerance)
        return overflow ? .max : expiry
    }

    /// Checks the size limits before any decoding; nil when they hold.
    static func sizeProblem(_ headerValue: String) -> String? {
        let bytes = headerValue.utf8
        guard bytes.count <= DeviceSignatureLimits.maximumHeaderValueBytes else {
            return
                "The Device-Signature is \(bytes.count) bytes; at most \(DeviceSignatureLimits.maximumHeaderValueBytes) are accepted."
        }
        var partLengths = [0]
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                partLengths.append(0)
            } else {
                partLengths[partLengths.count - 1] += 1
            }
        }
        guard partLengths.count == 3 else {
            return "A compact JWS has exactly three dot-separated parts; this one has \(partLengths.count)."
        }
        if partLengths[0] > maximumBase64URLLength(decodedBytes: DeviceSignatureLimits.maximumHeaderJSONBytes) {
            return "The JWS protected header is larger than \(DeviceSignatureLimits.maximumHeaderJSONBytes) bytes."
        }
        if partLengths[1] > maximumBase64URLLength(decodedBytes: DeviceSignatureLimits.maximumPayloadJSONBytes) {
            return "The JWS payload is larger than \(DeviceSignatureLimits.maximumPayloadJSONBytes) bytes."
        }
        return nil
    }

    /// The length of the unpadded base64url encoding of `decodedBytes` bytes: ceil(4n / 3).
    static func maximumBase64URLLength(decodedBytes: Int) -> Int {
        (decodedBytes * 4 + 2) / 3
    }
}
