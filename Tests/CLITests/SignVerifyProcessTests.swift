import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

extension CLIOfflineProcessTests {
    /// `fetchchannel sign` then `fetchchannel verify`, as child processes.
    @Suite struct SignVerifyProcessTests {
        @Test func signThenVerifyRoundTrip() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let store = sandbox.storeArguments
            let signed = try await sandbox.run(
                [
                    "sign", "--key", keyId, "--dispatch-target", "target-1", "--at", "1700000000000",
                    "--request-id", "request-1",
                ] + store)
            #expect(signed.status == 0 && signed.lines.count == 1, "\(signed.summary)")
            let jws = try #require(signed.lines.first)
            #expect(jws.split(separator: ".", omittingEmptySubsequences: false).count == 3)

            let publicKey = try sandbox.write(
                "public.pem", try await sandbox.run(["key", "export"] + store + ["--", keyId]).out)
            let verified = try await sandbox.run(["verify", "--public-key", publicKey.path, jws], passphrase: nil)
            #expect(verified.status == 0, "\(verified.summary)")
            #expect(
                verified.out
                    == #"{"dispatchTargetId":"target-1","requestId":"request-1","creationTimeInEpochMillis":1700000000000}"#
                    + "\n")
            #expect(verified.err.isEmpty)

            // The same with a JWK key file, --json, and the JWS on standard input.
            let jwkFile = try sandbox.write(
                "public.jwk", try await sandbox.run(["key", "export", "--format", "jwk"] + store + ["--", keyId]).out)
            let viaJSON = try await sandbox.run(
                ["verify", "--json", "--public-key", jwkFile.path, "-"], passphrase: nil,
                standardInput: Data((jws + "\n").utf8))
            #expect(viaJSON.status == 0, "\(viaJSON.summary)")
            let object = try #require(try viaJSON.json() as? [String: Any])
            #expect(object["valid"] as? Bool == true)
            #expect((object["header"] as? [String: String]) == ["alg": "ES256", "kid": "target-1", "typ": "JWT"])
            #expect((object["payload"] as? [String: Any])?["requestId"] as? String == "request-1")

            // The Device-Signature verifier (what the backend runs) accepts it too.
            let verifier = try DeviceSignatureVerifier(clock: ManualWallClock(millis: 1_700_000_000_000)) { id in
                id == "target-1"
                    ? try? P256.Signing.PublicKey(pemRepresentation: String(contentsOf: publicKey, encoding: .utf8))
                    : nil
            }
            guard case .success(let accepted) = verifier.verify(jws) else {
                Issue.record("the verifier refused the CLI's Device-Signature")
                return
            }
            #expect(accepted.requestId == "request-1")
        }

        @Test func verifyFailsWithTheReasonOnStandardError() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let otherId = try await sandbox.generateKey()
            let store = sandbox.storeArguments
            let jws = try #require(
                try await sandbox.run(["sign", "--key", keyId, "--dispatch-target", "t"] + store).lines.first)
            let otherKey = try sandbox.write(
                "other.pem", try await sandbox.run(["key", "export"] + store + ["--", otherId]).out)
            let ownKey = try sandbox.write(
                "own.pem", try await sandbox.run(["key", "export"] + store + ["--", keyId]).out)

            let wrongKey = try await sandbox.run(["verify", "--public-key", otherKey.path, jws])
            #expect(wrongKey.status == 1 && wrongKey.out.isEmpty, "\(wrongKey.summary)")
            #expect(wrongKey.err.hasPrefix("Error: the JWS is not valid: The JWS signature does not verify"))

            var tampered = Array(jws)
            let middle = try #require(jws.firstIndex(of: ".")).utf16Offset(in: jws) + 5
            tampered[middle] = tampered[middle] == "A" ? "B" : "A"
            let tamperedResult = try await sandbox.run(["verify", "--public-key", ownKey.path, String(tampered)])
            #expect(
                tamperedResult.status == 1 && tamperedResult.out.isEmpty && tamperedResult.err.hasPrefix("Error: "),
                "\(tamperedResult.summary)")

            let json = try await sandbox.run(["verify", "--json", "--public-key", otherKey.path, jws])
            #expect(json.status == 1)
            let object = try #require(try json.json() as? [String: Any])
            #expect(object["valid"] as? Bool == false && object["code"] as? String == "invalidSignature")

            let privateKeyGiven = try await sandbox.run([
                "verify", "--public-key", PackageLocations.keys.appendingPathComponent("demo-device-p256.pem").path,
                jws,
            ])
            #expect(
                privateKeyGiven.status == 1 && privateKeyGiven.err.contains("holds a private key"),
                "\(privateKeyGiven.summary)")
            let missingKeyJSON = try await sandbox.run([
                "verify", "--json", "--public-key", sandbox.file("absent.pem").path, jws,
            ])
            let refusal = try #require(try missingKeyJSON.json() as? [String: Any], "\(missingKeyJSON.summary)")
            #expect(missingKeyJSON.status == 1)
            #expect(refusal["valid"] as? Bool == false && refusal["code"] as? String == "unreadableInput")
            #expect(missingKeyJSON.err.hasPrefix("Error: "), "\(missingKeyJSON.summary)")
            // Standard input that cannot be read (a directory) still gets the refusal object.
            let unreadable = try await sandbox.run(
                ["verify", "--json", "--public-key", ownKey.path, "-"], standardInputPath: sandbox.root.path)
            let unread = try #require(try unreadable.json() as? [String: Any], "\(unreadable.summary)")
            #expect(unreadable.status == 1 && unread["valid"] as? Bool == false, "\(unreadable.summary)")
            #expect(unread["code"] as? String == "unreadableInput", "\(unreadable.summary)")
            let missingJWS = try await sandbox.run(["verify", "--public-key", ownKey.path])
            #expect(missingJWS.status == 64 && missingJWS.err.contains("missing argument JWS"))
        }

        /// `verify --json` embeds the payload as JSON only when it has one reading: with a duplicate
        /// member name JSONSerialization would keep one value and drop the other, so the payload
        /// is shown as its text.
        @Test func aPayloadWithADuplicateMemberIsShownAsItsText() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let key = try P256.Signing.PrivateKey()
            let publicKey = try sandbox.write("public.pem", key.publicKey.pemRepresentation)
            let header = Array(#"{"alg":"ES256","typ":"JWT"}"#.utf8)
            for (payload, expected) in [
                (#"{"dispatchTargetId":"A","dispatchTargetId":"B"}"#, nil),
                (#"{"dispatchTargetId":"A"}"#, ["dispatchTargetId": "A"]),
            ] {
                let jws = try CompactJWS.sign(header: header, payload: Array(payload.utf8), with: key)
                let verified = try await sandbox.run(["verify", "--json", "--public-key", publicKey.path, jws])
                #expect(verified.status == 0, "\(verified.summary)")
                let object = try #require(try verified.json() as? [String: Any])
                if let expected {
                    #expect(object["payload"] as? [String: String] == expected, "\(verified.summary)")
                } else {
                    #expect(object["payload"] as? String == payload, "\(verified.summary)")
                }
            }
        }

        @Test func signRefusesBadInputs() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let store = sandbox.storeArguments
            let unregistered = try await sandbox.run(["sign", "--key", keyId] + store)
            #expect(
                unregistered.status == 64 && unregistered.err.contains("--dispatch-target"), "\(unregistered.summary)")
            let longId = try await sandbox.run(
                ["sign", "--key", keyId, "--dispatch-target", "t", "--request-id", String(repeating: "r", count: 65)]
                    + store)
            #expect(longId.status == 64, "\(longId.summary)")
            let badTime = try await sandbox.run(
                ["sign", "--key", keyId, "--dispatch-target", "t", "--at", "yesterday"] + store)
            #expect(badTime.status == 64 && badTime.err.contains("'--at'"), "\(badTime.summary)")
            let controlTarget = try await sandbox.run(["sign", "--key", keyId, "--dispatch-target", "t\u{1}"] + store)
            #expect(controlTarget.status == 64, "\(controlTarget.summary)")
            // Known from the arguments alone: refused before the key is opened.
            let beforeTheKey = try await sandbox.run(
                ["sign", "--key", keyId, "--dispatch-target", "t\u{1}"] + store, passphrase: "not the passphrase")
            #expect(
                beforeTheKey.status == 64 && beforeTheKey.err.contains("--dispatch-target"), "\(beforeTheKey.summary)")
            let noKey = try await sandbox.run(["sign", "--dispatch-target", "t"] + store)
            #expect(noKey.status == 64 && noKey.err.contains("missing option '--key KEYID'"))

            let json = try await sandbox.run(["sign", "--json", "--key", keyId, "--dispatch-target", "t"] + store)
            let object = try #require(try json.json() as? [String: Any])
            #expect(
                Set(object.keys) == ["deviceSignature", "dispatchTargetId", "requestId", "creationTimeInEpochMillis"])
            let requestId = try #require(object["requestId"] as? String)
            #expect(requestId.count == 36, "a random UUID")
            let second = try #require(
                try await sandbox.run(["sign", "--json", "--key", keyId, "--dispatch-target", "t"] + store).json()
                    as? [String: Any])
            #expect(second["requestId"] as? String != requestId, "every signature gets a new request id")
        }
    }
}
