internal import CDeviceSigningShim
internal import COpenSSL
import Foundation
import Testing

@testable import DeviceSigning

/// A refused `epk` point cannot reach a derive: OpenSSL stores an off-curve point's coordinates
/// before it checks the curve, so the shim frees the peer key it was decoded into.
@Suite struct PeerPointRefusalTests {
    @Test func aKeyThatRefusedAPointIsFreedNotKept() throws {
        var point = [UInt8](try P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        var peer = dss_p256_peer_key_new()
        defer { EVP_PKEY_free(peer) }  // nil after a refusal: freeing it again would be a double free
        #expect(peer != nil)
        #expect(dss_p256_peer_key_set_point(&peer, point, point.count) == 1)
        #expect(peer != nil)
        point[64] ^= 1  // y changed: no longer on the curve
        #expect(dss_p256_peer_key_set_point(&peer, point, point.count) == 0)
        #expect(peer == nil, "the key that holds the refused point is still usable")
        ERR_clear_error()
    }

    @Test func aWrongLengthIsRefusedTheSameWay() {
        var peer = dss_p256_peer_key_new()
        defer { EVP_PKEY_free(peer) }
        let short = [UInt8](repeating: 4, count: 64)
        #expect(dss_p256_peer_key_set_point(&peer, short, short.count) == 0)
        #expect(peer == nil)
    }
}
