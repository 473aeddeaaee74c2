internal import COpenSSL
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

/// TPM 2.0 keys through OpenSSL's tpm2 provider, against a software TPM each test starts.
/// Blocking work runs on a thread of its own; the expectations are checked on the test's task.
@Suite(.dedicatedThread) struct TPMKeyTests {
    static let message = Array("device signing through a TPM".utf8)

    @Test func generatedKeySignsAndPlainOpenSSLVerifies() async throws {
        guard SoftwareTPM.available(for: "TPM key generation and signing") else { return }
        let outcome = try await onOwnThread { () throws -> (Bool, Bool, String, [String: Int32]?) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            let signature = try key.signature(for: Self.message)
            let valid = key.publicKey.isValidSignature(signature, for: Self.message)
            let wrongMessage = key.publicKey.isValidSignature(signature, for: Self.message + [0])
            let verdicts = try OpenSSLVerification.verify(
                signature: signature, message: Self.message,
                publicKeyPEM: key.publicKey.pemRepresentation)
            return (valid, wrongMessage, key.publicKey.jwkThumbprint, verdicts)
        }
        let (valid, wrongMessage, thumbprint, verdicts) = outcome
        #expect(valid, "the package's software verifier accepts the TPM signature")
        #expect(!wrongMessage)
        #expect(KeyStore.isValidKeyId(thumbprint))
        // Without openssl the cross-check is skipped (`verify` says so loudly); under CI=true that
        // is a failure, as the TPM's own absence is.
        guard let verdicts else {
            if TestSupport.isCI {
                Issue.record("openssl is not on PATH and CI=true: the check with plain OpenSSL did not run.")
            }
            return
        }
        #expect(verdicts["right"] == 0, "openssl dgst -verify accepts the TPM signature")
        #expect(verdicts["wrong"] == 1, "openssl dgst -verify refuses it over another message")
    }

    @Test func keyIsHardwareBoundAndNeverExportsPrivateMaterial() async throws {
        guard SoftwareTPM.available(for: "TPM key export refusal") else { return }
        let outcome = try await onOwnThread { () throws -> (Bool, [DeviceSigningError.Code?], String, String) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            let codes: [DeviceSigningError.Code?] = [
                caughtCode { _ = try key.rawRepresentation },
                caughtCode { _ = try key.x963Representation },
                caughtCode { _ = try key.derRepresentation },
                caughtCode { _ = try key.pemRepresentation },
                caughtCode { _ = try key.encryptedPEMRepresentation(passphrase: SecureBytes(Array("pass".utf8))) },
                caughtCode { _ = try key.jwkRepresentation(includingPrivateKey: true) },
            ]
            let reason = caughtReason { _ = try key.pemRepresentation }
            let publicJWK = try key.jwkRepresentation(includingPrivateKey: false)
                .withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            return (key.isHardwareBound, codes, reason, publicJWK)
        }
        let (isHardwareBound, codes, reason, publicJWK) = outcome
        #expect(isHardwareBound)
        #expect(codes == Array(repeating: .keyNotExportable, count: codes.count))
        #expect(reason.contains("TPM"), "the refusal says why: \(reason)")
        #expect(publicJWK.contains("\"x\"") && !publicJWK.contains("\"d\""))
    }

    @Test func tss2PEMRoundTripsToTheSameKeyInTheSameTPM() async throws {
        guard SoftwareTPM.available(for: "TPM key file round trip") else { return }
        let outcome = try await onOwnThread { () throws -> (String, String, String, Bool, Bool) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let pem: String
            let thumbprint: String
            do {
                let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
                pem = try key.tss2PEMRepresentation
                thumbprint = key.publicKey.jwkThumbprint
            }
            let loaded = try P256.Signing.PrivateKey(tss2PEM: pem, tpm: tpm.configuration())
            let signature = try loaded.signature(for: Self.message)
            return (
                pem, thumbprint, loaded.publicKey.jwkThumbprint, loaded.isHardwareBound,
                loaded.publicKey.isValidSignature(signature, for: Self.message)
            )
        }
        let (pem, thumbprint, loadedThumbprint, isHardwareBound, valid) = outcome
        #expect(pem.hasPrefix("-----BEGIN TSS2 PRIVATE KEY-----\n"))
        #expect(loadedThumbprint == thumbprint)
        #expect(isHardwareBound)
        #expect(valid)
    }

    @Test func deviceSignatureMadeWithATPMKeyIsAccepted() async throws {
        guard SoftwareTPM.available(for: "TPM Device-Signature") else { return }
        let target = "0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40"
        let clock = ManualWallClock(millis: 1_767_225_600_000)
        let outcome = try await onOwnThread { () throws -> (String, P256.Signing.PublicKey) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: target, clock: clock)
            return (try signer.headerValue(), key.publicKey)
        }
        let (header, publicKey) = outcome
        let verifier = try DeviceSignatureVerifier(clock: clock) { $0 == target ? publicKey : nil }
        let verified = try verifier.verify(header).get()
        #expect(verified.dispatchTargetId == target)
    }

    @Test func keyAgreementThroughTheTPMMatchesSoftwareECDH() async throws {
        guard SoftwareTPM.available(for: "TPM ECDH") else { return }
        let outcome = try await onOwnThread { () throws -> (Data, Data) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            let peer = try P256.Signing.PrivateKey()
            let inTPM = try key.usableBacking().sharedSecret(with: peer.publicKey.backing)
            let inSoftware = try peer.softwareBacking().sharedSecret(with: key.publicKey.backing)
            return (inTPM.withUnsafeBytes { Data($0) }, inSoftware.withUnsafeBytes { Data($0) })
        }
        #expect(outcome.0.count == 32)
        #expect(outcome.0 == outcome.1)
    }

    /// A peer's public key outlives the TPM sessions it met. OpenSSL caches a copy of the peer in
    /// the tpm2 provider on the peer's key, which held the provider (and a connection a TPM
    /// without a resource manager serves alone) after its session closed, and shut it down later
    /// on whatever thread dropped the key, after its library context was freed; each derive now
    /// gets a copy of its own. swtpm's transport connects per command, so the held connection
    /// cannot be counted here: the test checks that a kept peer serves one session after another
    /// and is dropped last (the sanitizer run watches that drop).
    @Test func aKeptPeerServesOneTPMSessionAfterAnother() async throws {
        guard SoftwareTPM.available(for: "TPM ECDH with a kept peer") else { return }
        let outcome = try await onOwnThread { () throws -> [Bool] in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let peerKey = try P256.KeyAgreement.PrivateKey()
            let peer = peerKey.publicKey
            var agreed: [Bool] = []
            for _ in 0..<2 {
                let key = try P256.KeyAgreement.PrivateKey(generatingInTPM: tpm.configuration())
                let inTPM = try key.sharedSecretFromKeyAgreement(with: peer)
                let inSoftware = try peerKey.sharedSecretFromKeyAgreement(with: key.publicKey)
                agreed.append(inTPM.withUnsafeBytes { Data($0) } == inSoftware.withUnsafeBytes { Data($0) })
            }
            withExtendedLifetime(peer) {}
            return agreed
        }
        #expect(outcome == [true, true])
    }

    /// The tpm2 provider asks the TPM for a key's curve when the key is made or loaded. A TPM
    /// that stops answering then used to be reported as a key on another curve
    /// (`unsupportedCurve`), a verdict on the key, instead of `tpmUnavailable`, which makes the
    /// next operation reconnect. The test checks a key of a TPM that has stopped.
    @Test func aTPMThatStopsWhileAKeysCurveIsReadIsUnavailable() async throws {
        guard SoftwareTPM.available(for: "TPM curve check") else { return }
        let error = try await onOwnThread { () throws -> DeviceSigningError? in
            let tpm = try SoftwareTPM()
            let key = try P256.KeyAgreement.PrivateKey(generatingInTPM: tpm.configuration())
            let loaded = try #require(key.material.tpmHandle?.loaded)
            let session = try #require(loaded.session)
            tpm.stop()
            return try session.worker.perform("check the curve") {
                caught {
                    guard EVP_PKEY_up_ref(loaded.pointer) == 1 else { throw CancellationError() }
                    _ = try EVPKey(takingOwnershipOf: loaded.pointer, in: session)
                }
            }
        }
        #expect(error?.code == .tpmUnavailable, "\(String(describing: error))")
        #expect(error?.reason.contains("read the key's curve") == true)
    }

    @Test func concurrentSignaturesWithOneTPMKeyAllSucceed() async throws {
        guard SoftwareTPM.available(for: "concurrent TPM signing") else { return }
        let results = try await onOwnThread { () throws -> [Bool] in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            let valid = Locked<[Bool]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for round in 0..<10 {
                    let message = Array("message \(worker) \(round)".utf8)
                    let ok = (try? key.signature(for: message)).map { key.publicKey.isValidSignature($0, for: message) }
                    valid.withLock { $0.append(ok == true) }
                }
            }
            return valid.withLock { $0 }
        }
        #expect(results.count == 40)
        #expect(results.allSatisfy { $0 }, "every concurrent signature went through the one TPM connection")
    }

    @Test func keyFromAnotherTPMIsRefusedAsForeign() async throws {
        guard SoftwareTPM.available(for: "foreign TPM key") else { return }
        let error = try await onOwnThread { () throws -> DeviceSigningError? in
            let first = try SoftwareTPM()
            defer { first.stop() }
            let second = try SoftwareTPM()
            defer { second.stop() }
            let pem = try P256.Signing.PrivateKey(generatingInTPM: first.configuration()).tss2PEMRepresentation
            return caught { _ = try P256.Signing.PrivateKey(tss2PEM: pem, tpm: second.configuration()) }
        }
        let refusal = try #require(error)
        #expect(refusal.code == .tpmKeyForeign)
        #expect(refusal.reason.contains("belongs to another TPM"), "\(refusal.reason)")
    }

    /// A key file whose public area the TPM library cannot decode (an authPolicy longer than a
    /// digest) is the file's fault: malformed, not an unavailable TPM, and the connection that
    /// the other keys of that TPM share stays usable.
    @Test func aDamagedKeyFileIsMalformedAndLeavesTheConnectionUsable() async throws {
        guard SoftwareTPM.available(for: "damaged TPM key file") else { return }
        let outcome = try await onOwnThread { () throws -> (DeviceSigningError?, Bool) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            _ = try key.signature(for: Self.message)
            let document = try PEM.decode(
                try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration()).tss2PEMRepresentation)
            var der = Array(document.der)
            // TPMT_PUBLIC: type ECC (0x0023), nameAlg SHA-256 (0x000B), 4 bytes of attributes, then
            // the authPolicy's size, 0 for these keys: 200 now, with no bytes behind it.
            let eccSHA256: [UInt8] = [0x00, 0x23, 0x00, 0x0B]
            let start = try #require(der.indices.first { der[$0...].starts(with: eccSHA256) })
            try #require(der[start + 8] == 0 && der[start + 9] == 0)
            der[start + 9] = 200
            let damaged = PEM.encode(label: document.label, der: der)
            let error = caught { _ = try P256.Signing.PrivateKey(tss2PEM: damaged, tpm: tpm.configuration()) }
            return (error, (try? key.signature(for: Self.message)) != nil)
        }
        #expect(outcome.0?.code == .malformedEncoding, "\(String(describing: outcome.0))")
        #expect(outcome.1, "the other key of that TPM no longer signs")
    }

    /// A key made under a persistent parent that this TPM does not hold: it used to read as the
    /// TPM refusing (tpmRefused).
    @Test func aKeyWhoseParentIsNotInTheTPMIsForeign() async throws {
        guard SoftwareTPM.available(for: "missing parent") else { return }
        let outcome = try await onOwnThread { () throws -> (DeviceSigningError?, Bool) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            let document = try PEM.decode(try key.tss2PEMRepresentation)
            var der = document.der
            // The owner hierarchy (0x40000001) becomes the persistent handle 0x81000001: one byte
            // longer (a leading zero), so the outer length (one byte, long form) grows by one.
            let owner: [UInt8] = [0x02, 0x04, 0x40, 0x00, 0x00, 0x01]
            let at = try #require(
                (0...(der.count - owner.count)).first { Array(der[$0..<($0 + owner.count)]) == owner })
            try #require(der[1] == 0x81 && der[2] < 0xFF)
            der.replaceSubrange(at..<(at + owner.count), with: [0x02, 0x05, 0x00, 0x81, 0x00, 0x00, 0x01])
            der[2] += 1
            let moved = PEM.encode(label: document.label, der: der)
            let error = caught { _ = try P256.Signing.PrivateKey(tss2PEM: moved, tpm: tpm.configuration()) }
            return (error, (try? key.signature(for: Self.message)) != nil)
        }
        #expect(outcome.0?.code == .tpmKeyForeign, "\(String(describing: outcome.0))")
        #expect(outcome.0?.reason.contains("parent") == true)
        #expect(outcome.1, "the connection stays usable for the TPM's other keys")
    }

    @Test func stoppedTPMGivesATypedErrorNamingTheTCTI() async throws {
        guard SoftwareTPM.available(for: "stopped TPM") else { return }
        let outcome = try await onOwnThread { () throws -> (String, DeviceSigningError?, DeviceSigningError?) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            _ = try key.signature(for: Self.message)
            tpm.stop()
            let first = caught { _ = try key.signature(for: Self.message) }
            let second = caught { _ = try key.signature(for: Self.message) }
            return (tpm.tcti, first, second)
        }
        let (tcti, first, second) = outcome
        let error = try #require(first)
        #expect(error.code == .tpmUnavailable)
        #expect(error.reason.contains(tcti), "the reason names the TCTI that was tried: \(error.reason)")
        #expect(second?.code == .tpmUnavailable, "the broken connection is not used again")
    }

    @Test func tpmThatStopsAnsweringFailsWithinTheTimeout() async throws {
        guard SoftwareTPM.available(for: "unresponsive TPM") else { return }
        let outcome = try await onOwnThread { () throws -> (String, DeviceSigningError?) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(
                generatingInTPM: tpm.configuration(timeout: LooseTimeBounds.scaled(.seconds(1))))
            tpm.pause()
            return (tpm.tcti, caught { _ = try key.signature(for: Self.message) })
        }
        let error = try #require(outcome.1)
        #expect(error.code == .tpmUnavailable)
        #expect(error.reason.contains("did not answer within"), "\(error.reason)")
        #expect(error.reason.contains(outcome.0))
    }

    /// One operation waits one timeout in all: the signature after a hang first waits for the old
    /// connection's queue, then would connect and load the key again, and each of those steps
    /// used to wait a timeout of its own (about twice the timeout here, more with a reload under
    /// way on another thread).
    @Test func theOperationAfterAHangWaitsOneTimeoutInAll() async throws {
        guard SoftwareTPM.available(for: "one deadline per TPM operation") else { return }
        let (error, elapsed) = try await onOwnThread { () throws -> (DeviceSigningError?, Duration) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(
                generatingInTPM: tpm.configuration(timeout: LooseTimeBounds.scaled(.seconds(1))))
            tpm.pause()
            _ = caught { _ = try key.signature(for: Self.message) }
            let started = ContinuousClock.now
            let error = caught { _ = try key.signature(for: Self.message) }
            let elapsed = ContinuousClock.now - started
            tpm.resume()
            return (error, elapsed)
        }
        #expect(error?.code == .tpmUnavailable)
        // The old steps took twice the timeout (the old queue's full wait, then connecting).
        let timeout = LooseTimeBounds.scaled(.seconds(1))
        #expect(elapsed < timeout + timeout / 2, "took \(elapsed)")
    }

    @Test func aSigningKeyWorksAgainOnceItsTPMAnswersAgain() async throws {
        guard SoftwareTPM.available(for: "TPM reconnection") else { return }
        let outcome = try await onOwnThread { () throws -> (DeviceSigningError?, Bool, Bool) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(
                generatingInTPM: tpm.configuration(timeout: LooseTimeBounds.scaled(.seconds(2))))
            tpm.pause()
            let failure = caught { _ = try key.signature(for: Self.message) }
            tpm.resume()
            let signature = try key.signature(for: Self.message)
            let again = try key.signature(for: Self.message)
            return (
                failure, key.publicKey.isValidSignature(signature, for: Self.message),
                key.publicKey.isValidSignature(again, for: Self.message)
            )
        }
        #expect(outcome.0?.code == .tpmUnavailable, "the operation that met the stopped TPM fails")
        #expect(outcome.1, "the first signature after the TPM answers again is valid")
        #expect(outcome.2)
    }

    /// A TPM reset (a reboot, a resume from hibernation) forgets every loaded key. The operation
    /// that finds it gone fails as a lost connection; once the TPM is started again, the next one
    /// loads the key file again and signs. Before, the first failure was `.tpmRefused`, which
    /// kept the connection and its key: every later signature failed until the process restarted.
    @Test func aSigningKeyWorksAgainAfterItsTPMWasReset() async throws {
        guard SoftwareTPM.available(for: "TPM reset") else { return }
        let outcome = try await onOwnThread { () throws -> (DeviceSigningError?, DeviceSigningError?, Bool) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            _ = try key.signature(for: Self.message)
            try #require(tpm.reset(), "swtpm_ioctl -i reset the TPM")
            let gone = caught { _ = try key.signature(for: Self.message) }
            // The key's connection is closed by now: reloading it met the TPM not started.
            let notStarted = caught { _ = try key.signature(for: Self.message) }
            try #require(tpm.startUp(), "TPM2_Startup(CLEAR) after the reset")
            let signature = try key.signature(for: Self.message)
            return (gone, notStarted, key.publicKey.isValidSignature(signature, for: Self.message))
        }
        #expect(outcome.0?.code == .tpmUnavailable, "\(String(describing: outcome.0))")
        #expect(outcome.0?.reason.contains("no longer holds the loaded key") == true)
        #expect(outcome.1?.code == .tpmUnavailable, "\(String(describing: outcome.1))")
        #expect(outcome.2, "the signature after the TPM started again is valid")
    }

    /// An owner hierarchy with an authorization value: the TPM refuses to make or load keys
    /// under it. That is the TPM's refusal, named as such; before, loading said the key file was
    /// garbled (and the key store, corrupt), which could have a user delete a good key.
    @Test func anOwnerHierarchyWithAPasswordIsARefusalNotACorruptFile() async throws {
        guard SoftwareTPM.available(for: "TPM owner authorization") else { return }
        let outcome = try await onOwnThread { () throws -> (DeviceSigningError?, DeviceSigningError?) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            // Its connection closes with the key, before the command below takes one of its own.
            let keyFile = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration()).tss2PEMRepresentation
            try #require(tpm.setOwnerAuthorization(Array("owner-secret".utf8)))
            let loading = caught { _ = try P256.Signing.PrivateKey(tss2PEM: keyFile, tpm: tpm.configuration()) }
            let generating = caught { _ = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration()) }
            return (loading, generating)
        }
        for failure in [outcome.0, outcome.1] {
            #expect(failure?.code == .tpmRefused, "\(String(describing: failure))")
            #expect(failure?.reason.contains("authorization value") == true)
        }
    }

    @Test func anEncryptionKeyWorksAgainOnceItsTPMAnswersAgain() async throws {
        guard SoftwareTPM.available(for: "TPM reconnection") else { return }
        let outcome = try await onOwnThread { () throws -> (DeviceSigningError?, Data, Data) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.KeyAgreement.PrivateKey(
                generatingInTPM: tpm.configuration(timeout: LooseTimeBounds.scaled(.seconds(2))))
            let peer = try P256.KeyAgreement.PrivateKey()
            tpm.pause()
            let failure = caught { _ = try key.sharedSecretFromKeyAgreement(with: peer.publicKey) }
            tpm.resume()
            let inTPM = try key.sharedSecretFromKeyAgreement(with: peer.publicKey)
            let inSoftware = try peer.sharedSecretFromKeyAgreement(with: key.publicKey)
            return (failure, inTPM.withUnsafeBytes { Data($0) }, inSoftware.withUnsafeBytes { Data($0) })
        }
        #expect(outcome.0?.code == .tpmUnavailable, "the agreement that met the stopped TPM fails")
        #expect(outcome.1.count == 32)
        #expect(outcome.1 == outcome.2, "the agreement after the TPM answers again is right")
    }

    /// A registration's signing and encryption keys share one connection. A TPM without a
    /// resource manager that serves one connection at a time (`/dev/tpm0`) would make the signing
    /// key's reload wait for the encryption key's old connection, which nothing closed, for good.
    /// So the reload drops every key of the failed connection (swtpm serves several connections,
    /// so the test checks that the encryption key's was dropped).
    @Test func keysSharingAFailedConnectionAllMoveToTheNewOne() async throws {
        guard SoftwareTPM.available(for: "TPM reconnection with two keys") else { return }
        let outcome = try await onOwnThread { () throws -> (DeviceSigningError?, Bool, Bool, Data, Data) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let configuration = tpm.configuration(timeout: LooseTimeBounds.scaled(.seconds(2)))
            let signing = try P256.Signing.PrivateKey(generatingInTPM: configuration)
            let encryption = try P256.KeyAgreement.PrivateKey(generatingInTPM: configuration)
            let peer = try P256.KeyAgreement.PrivateKey()
            tpm.pause()
            let failure = caught { _ = try signing.signature(for: Self.message) }
            tpm.resume()
            let signature = try signing.signature(for: Self.message)
            let encryptionKeyDropped = encryption.material.tpmHandle?.loaded == nil
            let inTPM = try encryption.sharedSecretFromKeyAgreement(with: peer.publicKey)
            let inSoftware = try peer.sharedSecretFromKeyAgreement(with: encryption.publicKey)
            return (
                failure, signing.publicKey.isValidSignature(signature, for: Self.message), encryptionKeyDropped,
                inTPM.withUnsafeBytes { Data($0) }, inSoftware.withUnsafeBytes { Data($0) }
            )
        }
        #expect(outcome.0?.code == .tpmUnavailable)
        #expect(outcome.1, "the signing key works again")
        #expect(outcome.2, "the encryption key still held the failed connection")
        #expect(outcome.3 == outcome.4, "the encryption key works again")
    }

    /// After one reload moved the signing key to a new connection, the encryption key has no
    /// loaded key (that reload dropped it). When the new connection fails in turn, the
    /// encryption key's reload still drops the signing key from it, rather than connect again
    /// beside a failed connection that a TPM serving one at a time would keep from it.
    @Test func aKeyWithoutALoadedKeyClosesTheFailedConnectionTheOthersHold() async throws {
        guard SoftwareTPM.available(for: "TPM reconnection after two failures") else { return }
        let outcome = try await onOwnThread { () throws -> (Bool, Bool, Data, Data, Bool) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let configuration = tpm.configuration(timeout: LooseTimeBounds.scaled(.seconds(2)))
            let signing = try P256.Signing.PrivateKey(generatingInTPM: configuration)
            let encryption = try P256.KeyAgreement.PrivateKey(generatingInTPM: configuration)
            let peer = try P256.KeyAgreement.PrivateKey()
            // The first failure: the signing key's reload moves it on and drops the encryption key.
            tpm.pause()
            _ = caught { _ = try signing.signature(for: Self.message) }
            tpm.resume()
            _ = try signing.signature(for: Self.message)
            let encryptionKeyDropped = encryption.material.tpmHandle?.loaded == nil
            // The second, on the connection that only the signing key holds now.
            tpm.pause()
            _ = caught { _ = try signing.signature(for: Self.message) }
            tpm.resume()
            let heldTheFailedOne =
                encryptionKeyDropped && signing.tpmHandle?.loaded?.session?.worker.hasFailed == true
            let inTPM = try encryption.sharedSecretFromKeyAgreement(with: peer.publicKey)
            let inSoftware = try peer.sharedSecretFromKeyAgreement(with: encryption.publicKey)
            let signingKeyDropped = signing.tpmHandle?.loaded == nil
            let signature = try signing.signature(for: Self.message)
            return (
                heldTheFailedOne, signingKeyDropped, inTPM.withUnsafeBytes { Data($0) },
                inSoftware.withUnsafeBytes { Data($0) },
                signing.publicKey.isValidSignature(signature, for: Self.message)
            )
        }
        #expect(outcome.0, "set-up: the signing key held the failed connection")
        #expect(outcome.1, "the signing key still held the failed connection after the encryption key's reload")
        #expect(outcome.2 == outcome.3, "the encryption key works again")
        #expect(outcome.4, "the signing key works again")
    }

    @Test func keysLoadedAtOnceShareOneConnection() async throws {
        guard SoftwareTPM.available(for: "TPM connection sharing") else { return }
        let outcome = try await onOwnThread { () throws -> [Result<P256.Signing.PrivateKey, any Error>] in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            // Made in a scope of their own, so that no session is open when the loads start.
            let files = try (0..<2).map { _ in
                try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration()).tss2PEMRepresentation
            }
            let results = Locked<[Result<P256.Signing.PrivateKey, any Error>]>([])
            let start = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            for file in files {
                done.enter()
                Thread {
                    start.wait()
                    let loaded = Result {
                        try P256.Signing.PrivateKey(
                            tss2PEM: file, tpm: tpm.configuration(timeout: LooseTimeBounds.scaled(.seconds(3))))
                    }
                    results.withLock { $0.append(loaded) }
                    done.leave()
                }.start()
            }
            start.signal()
            start.signal()
            done.wait()
            return results.withLock { $0 }
        }
        let keys = try outcome.map { try $0.get() }
        #expect(keys.count == 2)
        let sessions = keys.compactMap { $0.tpmHandle?.loaded?.session }
        #expect(sessions.count == 2)
        #expect(sessions.first === sessions.last, "two connections to a TPM that serves one at a time")
    }

    @Test func noTPMAtTheTCTIIsUnavailableNamingIt() async throws {
        guard SoftwareTPM.available(for: "unreachable TPM") else { return }
        let port = try #require(SoftwareTPM.refusedPort())
        let tcti = "swtpm:host=127.0.0.1,port=\(port)"
        let error = try await onOwnThread { () throws -> DeviceSigningError? in
            caught {
                _ = try P256.Signing.PrivateKey(generatingInTPM: TPMConfiguration(tcti: tcti, timeout: .seconds(20)))
            }
        }
        let refusal = try #require(error)
        #expect(refusal.code == .tpmUnavailable)
        #expect(refusal.reason.contains(tcti), "\(refusal.reason)")
    }

    @Test func textThatIsNotATSS2KeyIsRefusedBeforeAnyTPMIsContacted() throws {
        let software = try P256.Signing.PrivateKey()
        let pem = try software.pemRepresentation.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let port = try #require(SoftwareTPM.refusedPort())
        let unreachable = TPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=\(port)")
        #expect(caught { _ = try P256.Signing.PrivateKey(tss2PEM: pem, tpm: unreachable) }?.code == .malformedEncoding)
        let junk = caught { _ = try P256.Signing.PrivateKey(tss2PEM: "junk", tpm: unreachable) }
        #expect(junk?.code == .malformedEncoding)
        #expect(caught { _ = try software.tss2PEMRepresentation }?.code == .invalidKey)
        #expect(!software.isHardwareBound)
        let empty = TPMConfiguration(tcti: "")
        #expect(caught { _ = try P256.Signing.PrivateKey(generatingInTPM: empty) }?.code == .tpmUnavailable)
    }

    /// tss2 loads the library a TCTI names (a path too), and its cmd module runs a program: only
    /// the known modules are taken, before anything is loaded.
    @Test(arguments: ["cmd:tpm2-server", "/tmp/libevil.so:x", "libtss2-tcti-device.so.0:/dev/tpmrm0", "evil"])
    func aTCTIWhoseModuleIsNotKnownIsRefused(tcti: String) {
        let refusal = caught { _ = try P256.Signing.PrivateKey(generatingInTPM: TPMConfiguration(tcti: tcti)) }
        #expect(refusal?.code == .tpmUnavailable)
        #expect(
            refusal?.reason.contains("only device, mssim, swtpm, tabrmd are used") == true,
            "\(String(describing: refusal))")
    }

    /// tss2 and the shim's environment entry take at most 1024 bytes: a longer TCTI is refused with
    /// a reason before any TPM is contacted, rather than cut short to another TCTI.
    @Test func aTCTIOverTheLimitIsRefusedBeforeAnyTPMIsContacted() throws {
        let port = try #require(SoftwareTPM.refusedPort())
        let atLimit = "swtpm:host=127.0.0.1,port=\(port)," + String(repeating: "x", count: 1024)
        let tooLong = TPMConfiguration(tcti: String(atLimit.prefix(1025)))
        let refusal = caught { _ = try P256.Signing.PrivateKey(generatingInTPM: tooLong) }
        #expect(refusal?.code == .tpmUnavailable)
        #expect(refusal?.reason.contains("1 to 1024 bytes") == true, "\(String(describing: refusal))")
        // At the limit the TCTI is taken, and the TPM it names is asked: nothing listens there, so
        // the refusal is the connection's, naming the TCTI.
        guard SoftwareTPM.available(for: "a TCTI at the length limit") else { return }
        let atLimitTCTI = String(atLimit.prefix(1024))
        let atLimitRefusal = caught {
            _ = try P256.Signing.PrivateKey(
                generatingInTPM: TPMConfiguration(tcti: atLimitTCTI, timeout: .seconds(10)))
        }
        #expect(atLimitRefusal?.code == .tpmUnavailable)
        #expect(
            atLimitRefusal?.reason.contains("1 to 1024 bytes") == false
                && atLimitRefusal?.reason.contains(String(atLimitTCTI.prefix(40))) == true,
            "\(String(describing: atLimitRefusal))")
    }
}
