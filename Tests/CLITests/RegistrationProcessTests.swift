import DeviceSigning
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension CLISubprocessTests {
    /// `fetchchannel register` and `rotate` against a reference backend started in this process.
    @Suite struct RegistrationProcessTests {
        /// Whether `hold`'s request arrived within a minute; an issue naming `request` when not.
        /// Waited for on a thread of its own: the test's own thread runs the child task that sends
        /// the request.
        static func held(_ hold: AnswerHold, _ request: String) async -> Bool {
            guard await DedicatedThreads.run({ hold.waitUntilHeld(seconds: 60) }) else {
                Issue.record("\(request) never arrived at the backend")
                return false
            }
            return true
        }

        /// GET the pending operations of `deviceId` with `signature`; (status, body).
        func fetch(_ backend: ReferenceBackend, deviceId: String, signature: String) async throws -> (Int, String) {
            var request = URLRequest(
                url: backend.baseURL.appendingPathComponent("nevisfido/devices/outofbandoperations/\(deviceId)"))
            request.setValue(signature, forHTTPHeaderField: "Device-Signature")
            let (data, response) = try await URLSession(configuration: .ephemeral).data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }

        func keyJSON(_ sandbox: CLISandbox, _ keyId: String) async throws -> [String: Any] {
            let shown = try await sandbox.run(["key", "show", "--json"] + sandbox.storeArguments + ["--", keyId])
            return try #require(try shown.json() as? [String: Any], "\(shown.summary)")
        }

        @Test func registerStoresTheDispatchTargetAndTheBackendAcceptsItsSignatures() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let server = backend.baseURL.absoluteString

            let registered = try await sandbox.run(
                [
                    "register", "--server", server, "--device-id", "device-1", "--key", keyId,
                    "--username", "alice", "--json",
                ] + sandbox.storeArguments, passphrase: nil)
            #expect(registered.status == 0, "\(registered.summary)")
            let answer = try #require(try registered.json() as? [String: Any])
            let targetId = try #require(answer["dispatchTargetId"] as? String)
            #expect(
                answer["keyId"] as? String == keyId && answer["server"] as? String == server
                    && answer["deviceId"] as? String == "device-1")
            #expect(answer["extId"] is String)

            let metadata = try await keyJSON(sandbox, keyId)
            #expect(metadata["dispatchTargetId"] as? String == targetId)
            #expect(metadata["server"] as? String == server)
            #expect(metadata["deviceId"] as? String == "device-1")

            // A signature from `sign` (dispatch target taken from the metadata) fetches the device's operations.
            let operation = try backend.dispatch(deviceId: "device-1", channel: "png-qr-code")
            let signature = try #require(
                try await sandbox.run(["sign", "--key", keyId] + sandbox.storeArguments).lines.first)
            let (status, body) = try await fetch(backend, deviceId: "device-1", signature: signature)
            #expect(status == 200, "\(body)")
            #expect(body.contains(operation.token))

            // Registering the same key again is refused before any request.
            let requestsBefore = backend.statistics.requests(to: .targets)
            let again = try await sandbox.run(
                ["register", "--server", server, "--device-id", "device-1", "--key", keyId] + sandbox.storeArguments)
            #expect(again.status == 1 && again.err.contains("already registered"), "\(again.summary)")
            #expect(backend.statistics.requests(to: .targets) == requestsBefore)
        }

        /// Two registers of one key at once: the second is refused before it sends anything (it
        /// used to register a second dispatch target on the backend, which nothing recorded).
        @Test func concurrentRegistersOfOneKeyRecordOne() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let server = backend.baseURL.absoluteString
            func register(_ device: String) async throws -> CLIResult {
                try await sandbox.run(
                    ["register", "--server", server, "--device-id", device, "--key", keyId, "--json"]
                        + sandbox.storeArguments)
            }
            // The first register's request waits at the backend while the second runs.
            let hold = backend.holdNextAnswer(to: .targets)
            async let first = register("device-a")
            // After the async let, so that a throw releases the answer before the child is awaited.
            defer { hold.release() }
            guard await Self.held(hold, "the first register's request") else { return }
            let second = try await register("device-b")
            hold.release()
            let winner = try await first

            #expect(winner.status == 0, "\(winner.summary)")
            let recorded = try #require(try winner.json() as? [String: Any], "\(winner.summary)")
            #expect(
                try await keyJSON(sandbox, keyId)["dispatchTargetId"] as? String == recorded["dispatchTargetId"]
                    as? String)
            // Refused because the first was under way, not because it had finished.
            #expect(second.status == 1 && second.err.contains("under way"), "\(second.summary)")
            #expect(backend.statistics.requests(to: .targets) == 1)
        }

        /// A new key of `sandbox`, registered on `backend` as device-1; its id and dispatch target.
        func registeredKey(in sandbox: CLISandbox, on backend: ReferenceBackend) async throws -> (String, String) {
            let keyId = try await sandbox.generateKey()
            let registered = try await sandbox.run(
                ["register", "--server", backend.baseURL.absoluteString, "--device-id", "device-1", "--key", keyId]
                    + sandbox.storeArguments)
            #expect(registered.status == 0, "\(registered.summary)")
            return (keyId, try #require(registered.lines.first, "\(registered.summary)"))
        }

        /// Two rotations of one key at once: the backend could take both new keys, leaving two
        /// keys that record one dispatch target. The second is refused before it sends anything.
        @Test func concurrentRotationsOfOneKeyLeaveOneNewKey() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (keyId, targetId) = try await registeredKey(in: sandbox, on: backend)
            let requestsBefore = backend.statistics.requests(to: .targets)
            func rotate() async throws -> CLIResult {
                try await sandbox.run(["rotate", "--key", keyId, "--json"] + sandbox.storeArguments)
            }
            // The first rotation's request waits at the backend while the second runs.
            let hold = backend.holdNextAnswer(to: .targets)
            async let first = rotate()
            defer { hold.release() }
            guard await Self.held(hold, "the first rotation's request") else { return }
            let second = try await rotate()
            hold.release()
            let winner = try await first

            #expect(winner.status == 0, "\(winner.summary)")
            #expect(second.status == 1 && second.err.contains("under way"), "\(second.summary)")
            #expect(backend.statistics.requests(to: .targets) == requestsBefore + 1)
            let listed = try await sandbox.run(["key", "list", "--json"] + sandbox.storeArguments)
            let keys = try #require(try listed.json() as? [[String: Any]], "\(listed.summary)")
            #expect(keys.filter { $0["dispatchTargetId"] as? String == targetId }.count == 1, "\(listed.out)")
        }

        /// The new key of a rotation under way is claimed too: deleting it while the backend is
        /// asked to take it would leave the backend with a key that exists nowhere.
        @Test func aRotationsNewKeyCannotBeDeletedWhileTheBackendIsAsked() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (keyId, _) = try await registeredKey(in: sandbox, on: backend)
            var candidate = ""
            let rotated = try await rotation(of: keyId, in: sandbox, heldAt: backend) { newKeyId in
                candidate = newKeyId
                let deleted = try await sandbox.run(["key", "delete"] + sandbox.storeArguments + ["--", newKeyId])
                #expect(deleted.status == 1 && deleted.err.contains("in use"), "\(deleted.summary)")
            }
            guard let rotated else { return }
            #expect(rotated.status == 0 && rotated.lines.first == candidate, "\(rotated.summary)")
        }

        /// `rotate --key keyId` with the backend's answer to its PATCH held: `whileHeld` runs once the
        /// PATCH arrived, given the new key's id (in the store before the PATCH is sent), and the
        /// rotation's result is returned after the answer is let go; nil when the PATCH never came.
        func rotation(
            of keyId: String, in sandbox: CLISandbox, heldAt backend: ReferenceBackend,
            whileHeld: (String) async throws -> Void
        ) async throws -> CLIResult? {
            let hold = backend.holdNextAnswer(to: .targets)
            async let rotation = sandbox.run(["rotate", "--key", keyId] + sandbox.storeArguments)
            defer { hold.release() }
            guard await Self.held(hold, "the rotation's request") else { return nil }
            let listed = try await sandbox.run(["key", "list", "--json"] + sandbox.storeArguments)
            let keys = try #require(try listed.json() as? [[String: Any]], "\(listed.summary)")
            let newKeyId = try #require(
                keys.compactMap { $0["keyId"] as? String }.first { $0 != keyId }, "no new key: \(listed.out)")
            try await whileHeld(newKeyId)
            hold.release()
            return try await rotation
        }

        /// The backend took the new key, but recording it in the store failed (here its record
        /// became open to others meanwhile): the error says that the backend now verifies with
        /// the new key and that it must be kept, and the next run records it. The store's own
        /// error used to be passed on as it was, beside advice elsewhere to delete the new key.
        @Test func aRotationTheStoreCouldNotRecordSaysToKeepTheNewKey() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (keyId, _) = try await registeredKey(in: sandbox, on: backend)
            let store = URL(fileURLWithPath: sandbox.store)
            var newKeyId = ""
            let held = try await rotation(of: keyId, in: sandbox, heldAt: backend) { made in
                newKeyId = made
                try #require(chmod(store.appendingPathComponent(made + ".json").path, 0o644) == 0)
            }
            guard let rotated = held else { return }
            let recordPath = store.appendingPathComponent(newKeyId + ".json").path
            #expect(rotated.status == 1, "\(rotated.summary)")
            #expect(
                rotated.err.contains("now verifies dispatch target") && rotated.err.contains("Keep key \(newKeyId)")
                    && rotated.err.contains("rotate --key \(keyId)' again"), "\(rotated.summary)")
            try #require(chmod(recordPath, 0o600) == 0)
            let again = try await sandbox.run(["rotate", "--key", keyId, "--json"] + sandbox.storeArguments)
            #expect(again.status == 0, "\(again.summary)")
            #expect((try again.json() as? [String: Any])?["newKeyId"] as? String == newKeyId, "\(again.summary)")
        }

        /// A rotation stopped after it recorded the new key but before it deleted the old one
        /// leaves two records naming the dispatch target (here made by putting the old key's files
        /// back after a rotation). The next rotation of the old key finds that the backend holds
        /// the other and completes: it made a third key before, and sent a PATCH signed with a key
        /// the backend no longer accepts.
        @Test func aRotationStoppedBeforeDeletingTheOldKeyIsCompletedByTheNextRun() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (oldKeyId, target) = try await registeredKey(in: sandbox, on: backend)
            let store = URL(fileURLWithPath: sandbox.store)
            let names = [".pem", ".enc.pem", ".json"].map { oldKeyId + $0 }
            let saved = try names.map { try Data(contentsOf: store.appendingPathComponent($0)) }
            let rotated = try await sandbox.run(["rotate", "--key", oldKeyId] + sandbox.storeArguments)
            try #require(rotated.status == 0, "\(rotated.summary)")
            let newKeyId = try #require(rotated.lines.first)
            for (name, contents) in zip(names, saved) {
                #expect(
                    FileManager.default.createFile(
                        atPath: store.appendingPathComponent(name).path, contents: contents,
                        attributes: [.posixPermissions: 0o600]))
            }
            let listed = try await sandbox.run(["key", "list", "--json"] + sandbox.storeArguments)
            let records = try #require(try listed.json() as? [[String: Any]], "\(listed.summary)")
            try #require(records.filter { $0["dispatchTargetId"] as? String == target }.count == 2)

            let again = try await sandbox.run(["rotate", "--key", oldKeyId, "--json"] + sandbox.storeArguments)
            #expect(again.status == 0, "\(again.summary)")
            #expect(again.err.contains("An earlier rotation took effect"), "\(again.summary)")
            #expect((try again.json() as? [String: Any])?["newKeyId"] as? String == newKeyId)
            let left = try await sandbox.run(["key", "list", "--json"] + sandbox.storeArguments)
            let keys = try #require(try left.json() as? [[String: Any]], "\(left.summary)")
            #expect(keys.compactMap { $0["keyId"] as? String } == [newKeyId], "no third key, the old one gone")
        }

        @Test func rotateReplacesTheKeyOnlyAfterTheBackendAccepted() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments
            let oldKeyId = try await sandbox.generateKey()
            let registered = try await sandbox.run(
                [
                    "register", "--server", backend.baseURL.absoluteString, "--device-id", "device-2",
                    "--key", oldKeyId,
                ] + store)
            let targetId = try #require(registered.lines.first, "\(registered.summary)")
            // Signed with the old key before the rotation, sent after it.
            let oldSignature = try #require(try await sandbox.run(["sign", "--key", oldKeyId] + store).lines.first)

            let rotated = try await sandbox.run(["rotate", "--key", oldKeyId, "--json"] + store)
            #expect(rotated.status == 0, "\(rotated.summary)")
            let answer = try #require(try rotated.json() as? [String: Any])
            let newKeyId = try #require(answer["newKeyId"] as? String)
            #expect(answer["oldKeyId"] as? String == oldKeyId && answer["dispatchTargetId"] as? String == targetId)
            #expect(newKeyId != oldKeyId)

            // The store holds only the new key, registered as the same dispatch target.
            let listed = try #require(
                try await sandbox.run(["key", "list", "--json"] + store).json() as? [[String: Any]])
            #expect(listed.count == 1)
            #expect(listed.first?["keyId"] as? String == newKeyId)
            #expect(listed.first?["dispatchTargetId"] as? String == targetId)
            #expect(listed.first?["deviceId"] as? String == "device-2")

            // The backend verifies with the new key and no longer with the old one.
            let (oldStatus, oldBody) = try await fetch(backend, deviceId: "device-2", signature: oldSignature)
            #expect(oldStatus == 401 && oldBody.contains("INVALID_SIGNATURE"), "\(oldBody)")
            let newSignature = try #require(try await sandbox.run(["sign", "--key", newKeyId] + store).lines.first)
            let (newStatus, newBody) = try await fetch(backend, deviceId: "device-2", signature: newSignature)
            #expect(newStatus == 200, "\(newBody)")
        }

        @Test func refusedRotationKeepsTheOldKey() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments
            let keyId = try await sandbox.generateKey()
            let registered = try await sandbox.run(
                [
                    "register", "--server", backend.baseURL.absoluteString, "--device-id", "device-3",
                    "--key", keyId,
                ] + store)
            #expect(registered.status == 0, "\(registered.summary)")

            // A server error may come after the change was made: neither key may go.
            try backend.injectFault(EmulatorFault(endpoint: .targets, kind: .status, status: 500, count: 1))
            let refused = try await sandbox.run(["rotate", "--key", keyId] + store)
            #expect(refused.status == 1 && refused.out.isEmpty, "\(refused.summary)")
            #expect(
                refused.err.contains("500") && refused.err.contains("verifies dispatch target")
                    && refused.err.contains("with the old key and refuses the new one"), "\(refused.summary)")
            #expect(refused.err.contains("Both keys are kept"), "\(refused.summary)")
            let listed = try #require(
                try await sandbox.run(["key", "list", "--json"] + store).json() as? [[String: Any]])
            #expect(listed.count == 2, "both keys kept")
            #expect(listed.contains { $0["keyId"] as? String == keyId && $0["dispatchTargetId"] is String })
            let signature = try #require(try await sandbox.run(["sign", "--key", keyId] + store).lines.first)
            let (status, body) = try await fetch(backend, deviceId: "device-3", signature: signature)
            #expect(status == 200, "the backend still holds the old key: \(body)")
        }

        /// A backend stand-in that registers any key as `target-1` and answers the rotation with
        /// `rotationStatus`, `rotationHeaders` and `rotationBody`.
        static func scriptedBackend(
            rotationStatus: Int, rotationHeaders: HTTPHeaders = [:],
            rotationBody: String = "{}"
        ) throws -> (HTTPServer, URL) {
            let server = HTTPServer { request in
                if request.method == "POST" {
                    return .respond(.json(status: 201, Data(#"{"id":"target-1","extId":"ext-1"}"#.utf8)))
                }
                return .respond(
                    HTTPResponse(status: rotationStatus, headers: rotationHeaders, body: Array(rotationBody.utf8)))
            }
            let address = try server.start()
            return (server, address.baseURL)
        }

        /// The keys of the store, by id.
        /// A new key of `sandbox`, registered at the scripted backend `url` (which must accept it).
        func registeredKey(in sandbox: CLISandbox, at url: URL) async throws -> String {
            let keyId = try await sandbox.generateKey()
            let registered = try await sandbox.run(
                ["register", "--server", url.absoluteString, "--device-id", "phone-9", "--key", keyId]
                    + sandbox.storeArguments)
            #expect(registered.status == 0, "\(registered.summary)")
            return keyId
        }

        /// A new key of `sandbox` registered at `backend` as a key made before encryption keys
        /// existed was: no encryption key in its entry, nor at the backend.
        func registeredKeyWithoutEncryptionKey(
            in sandbox: CLISandbox, at backend: DispatchTargetBackendStandIn
        ) async throws -> String {
            let keyId = try await registeredKey(in: sandbox, at: backend.baseURL)
            try EncryptionKeyProcessTests.makeOldFormat(sandbox, keyId)
            backend.forgetEncryptionKey()
            return keyId
        }

        func keyIds(_ sandbox: CLISandbox) async throws -> Set<String> {
            let listed = try #require(
                try await sandbox.run(["key", "list", "--json"] + sandbox.storeArguments).json() as? [[String: Any]])
            return Set(listed.compactMap { $0["keyId"] as? String })
        }

        /// Security review: a redirect must not carry the old key's signature away, and a rotation
        /// that is not confirmed must not delete the old key.
        @Test func aRedirectedRotationIsNotFollowedAndKeepsBothKeys() async throws {
            let elsewhere = HTTPServer { _ in .respond(.json(status: 200, Data(#"{"id":"target-1"}"#.utf8))) }
            let elsewhereAddress = try elsewhere.start()
            defer { elsewhere.stop() }
            let location = elsewhereAddress.baseURL.absoluteString + "/nevisfido/token/dispatch/targets/target-1"
            let (backend, url) = try Self.scriptedBackend(rotationStatus: 307, rotationHeaders: ["Location": location])
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await registeredKey(in: sandbox, at: url)

            let rotated = try await sandbox.run(["rotate", "--key", keyId] + sandbox.storeArguments)
            #expect(rotated.status == 1, "\(rotated.summary)")
            #expect(rotated.err.contains("307") && rotated.err.contains("not followed"), "\(rotated.summary)")
            #expect(rotated.err.contains("still holds the old key"), "\(rotated.summary)")
            #expect(elsewhere.totalAccepted == 0, "the redirect target received a connection")
            let keys = try await keyIds(sandbox)
            #expect(keys.count == 2 && keys.contains(keyId), "both keys remain: \(keys)")
        }

        @Test func anAcceptanceThatDoesNotNameTheTargetKeepsBothKeys() async throws {
            let (backend, url) = try Self.scriptedBackend(
                rotationStatus: 200, rotationHeaders: ["Content-Type": "application/json"],
                rotationBody: #"{"id":"another-target"}"#)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await registeredKey(in: sandbox, at: url)
            let rotated = try await sandbox.run(["rotate", "--key", keyId] + sandbox.storeArguments)
            #expect(
                rotated.status == 1 && rotated.err.contains("does not confirm dispatch target target-1"),
                "\(rotated.summary)")
            let keys = try await keyIds(sandbox)
            #expect(keys.count == 2 && keys.contains(keyId), "both keys remain: \(keys)")
        }

        /// Signing the rotation request with the old key fails after the new key was stored (a TPM
        /// that does not answer; here a dispatch target id the signer refuses, as a hand-edited
        /// record may hold). Nothing was sent, so the new key goes again: the error escaped and
        /// left it, and the next rotation took it for the new key of an earlier one.
        @Test func aRotationThatCannotSignItsRequestRemovesTheNewKey() async throws {
            let (backend, url) = try Self.scriptedBackend(rotationStatus: 200)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await registeredKey(in: sandbox, at: url)
            let unsignable = String(repeating: "t", count: DeviceSignatureLimits.maximumDispatchTargetIdLength + 1)
            try KeyStore(directory: URL(fileURLWithPath: sandbox.store), createIfMissing: false)
                .updateMetadata(keyId) { $0.dispatchTargetId = unsignable }
            let connections = backend.totalAccepted

            let rotated = try await sandbox.run(["rotate", "--key", keyId] + sandbox.storeArguments)
            #expect(
                rotated.status == 1 && rotated.err.contains("Error: cannot sign the rotation request with key \(keyId)")
                    && rotated.err.contains("Nothing was sent"), "\(rotated.summary)")
            #expect(try await keyIds(sandbox) == [keyId], "only the old key is left")
            #expect(backend.totalAccepted == connections, "the rotation reached the backend")
        }

        /// The backend applied the rotation, then answered a server error. Before, both keys were
        /// kept with the old one registered here, the backend holding the new one; the advice then
        /// led to a device no stored key could sign for. Now the backend is asked which key it holds.
        @Test func aRotationAppliedBeforeAServerErrorCompletes() async throws {
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            backend.script.withLock { $0.patchStatusAfterApplying = 500 }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let oldKeyId = try await registeredKey(in: sandbox, at: backend.baseURL)

            let rotated = try await sandbox.run(["rotate", "--key", oldKeyId, "--json"] + sandbox.storeArguments)
            #expect(rotated.status == 0, "\(rotated.summary)")
            #expect(rotated.err.contains("accepts the new key"), "\(rotated.summary)")
            let newKeyId = try #require((try rotated.json() as? [String: Any])?["newKeyId"] as? String)
            #expect(try await keyIds(sandbox) == [newKeyId])
            #expect(try await keyJSON(sandbox, newKeyId)["dispatchTargetId"] as? String == "target-1")
            // The questions asked for the answer encrypted, as fetch does: no token in plain text.
            let accepts = backend.readAccepts.withLock { $0 }
            #expect(accepts.count == 2 && accepts.allSatisfy { $0.hasPrefix("application/jose") }, "\(accepts)")
        }

        /// A backend (or a cache in front of it) that accepts the new key for a read but also the
        /// old one proves nothing: both keys are kept, rather than the old key deleted on one answer.
        @Test func aBackendThatAcceptsBothKeysForAReadDoesNotCompleteARotation() async throws {
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            backend.script.withLock { $0 = .init(patchStatusAfterApplying: 500, readsAcceptAnyKnownKey: true) }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let oldKeyId = try await registeredKey(in: sandbox, at: backend.baseURL)

            let rotated = try await sandbox.run(["rotate", "--key", oldKeyId] + sandbox.storeArguments)
            #expect(rotated.status == 1, "\(rotated.summary)")
            #expect(rotated.err.contains("Whether the backend took the new key is unknown"), "\(rotated.summary)")
            let kept = try await keyIds(sandbox)
            #expect(kept.count == 2 && kept.contains(oldKeyId), "\(kept)")
        }

        /// A PATCH refused as INVALID_SIGNATURE changed nothing: a refusal, both keys kept. Run
        /// again, the leftover key is asked about, refused too, and nothing more is made: the
        /// registration cannot be rotated from this store.
        @Test func aBackendHoldingAnotherKeyRefusesTheRotationAndTheNextRunSaysSo() async throws {
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let oldKeyId = try await registeredKey(in: sandbox, at: backend.baseURL)
            try backend.replaceKeyWithAStrangersKey()

            let refused = try await sandbox.run(["rotate", "--key", oldKeyId] + sandbox.storeArguments)
            #expect(refused.status == 1, "\(refused.summary)")
            #expect(
                refused.err.contains("401 INVALID_SIGNATURE")
                    && refused.err.contains("does not verify dispatch target target-1 with key \(oldKeyId)"),
                "\(refused.summary)")
            let kept = try await keyIds(sandbox)
            #expect(kept.count == 2 && kept.contains(oldKeyId), "\(kept)")

            let again = try await sandbox.run(["rotate", "--key", oldKeyId] + sandbox.storeArguments)
            #expect(again.status == 1 && again.err.contains("cannot be rotated from here"), "\(again.summary)")
            #expect(try await keyIds(sandbox) == kept, "no further key was made")
        }

        /// The answer lost and the backend not answering the question either: both keys are kept.
        /// Run again, rotate finds that the backend holds the first run's new key and completes
        /// that rotation, instead of signing another with a key the backend no longer accepts.
        @Test func aRotationWhoseOutcomeWasUnknownIsCompletedByTheNextRun() async throws {
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            backend.script.withLock { $0 = .init(patchStatusAfterApplying: 500, readStatus: 503) }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let oldKeyId = try await registeredKey(in: sandbox, at: backend.baseURL)

            let unknown = try await sandbox.run(["rotate", "--key", oldKeyId] + sandbox.storeArguments)
            #expect(unknown.status == 1, "\(unknown.summary)")
            #expect(
                unknown.err.contains("Whether the backend took the new key is unknown")
                    && unknown.err.contains("Run 'fetchchannel rotate --key \(oldKeyId)' again"), "\(unknown.summary)")
            let kept = try await keyIds(sandbox)
            #expect(kept.count == 2 && kept.contains(oldKeyId), "\(kept)")
            let firstNewKeyId = try #require(kept.subtracting([oldKeyId]).first)

            backend.script.withLock { $0 = .init() }
            let again = try await sandbox.run(["rotate", "--key", oldKeyId, "--json"] + sandbox.storeArguments)
            #expect(again.status == 0, "\(again.summary)")
            #expect(again.err.contains("An earlier rotation took effect"), "\(again.summary)")
            #expect((try again.json() as? [String: Any])?["newKeyId"] as? String == firstNewKeyId)
            #expect(try await keyIds(sandbox) == [firstNewKeyId], "no further key was made")
            #expect(try await keyJSON(sandbox, firstNewKeyId)["dispatchTargetId"] as? String == "target-1")
        }

        /// A key registered before encryption keys existed: its target has none, and the backend
        /// answers its reads in JSON (JOSE is refused for it). Its rotation did not take effect:
        /// the question signed with the old key asks for JSON, as its registration does, and the
        /// answers say that the backend still holds the old key. Before, both questions asked for
        /// JOSE, the old key's was refused (406) and the outcome was left unknown.
        @Test func aRotationOfAKeyWithoutEncryptionKeyThatDidNotTakeEffectSaysSo() async throws {
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let oldKeyId = try await registeredKeyWithoutEncryptionKey(in: sandbox, at: backend)
            backend.script.withLock { $0.patchStatusWithoutApplying = 500 }

            let rotated = try await sandbox.run(["rotate", "--key", oldKeyId] + sandbox.storeArguments)
            #expect(rotated.status == 1, "\(rotated.summary)")
            #expect(rotated.err.contains("with the old key and refuses the new one"), "\(rotated.summary)")
            let accepts = backend.readAccepts.withLock { $0 }
            #expect(accepts.map { $0.hasPrefix("application/jose") } == [true, false], "\(accepts)")
            let kept = try await keyIds(sandbox)
            #expect(kept.count == 2 && kept.contains(oldKeyId), "\(kept)")
        }

        /// The same key's rotation took effect, but its answer and the questions were lost. The
        /// next run asks about the first run's key with that key's encryption key (the PATCH gave
        /// it to the backend), so a backend that insists on JOSE once a target has an encryption
        /// key answers, and the rotation completes. Before, the leftover key's question asked for
        /// JSON, as the old key's registration does, and was refused.
        @Test func aLostRotationOfAKeyWithoutEncryptionKeyCompletesAtAJOSEOnlyBackend() async throws {
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let oldKeyId = try await registeredKeyWithoutEncryptionKey(in: sandbox, at: backend)
            backend.script.withLock { $0 = .init(patchStatusAfterApplying: 500, readStatus: 503) }

            let unknown = try await sandbox.run(["rotate", "--key", oldKeyId] + sandbox.storeArguments)
            #expect(unknown.status == 1, "\(unknown.summary)")
            let kept = try await keyIds(sandbox)
            #expect(kept.count == 2 && kept.contains(oldKeyId), "\(kept)")
            let firstNewKeyId = try #require(kept.subtracting([oldKeyId]).first)

            backend.script.withLock { $0 = .init(insistsOnJOSE: true) }
            let again = try await sandbox.run(["rotate", "--key", oldKeyId, "--json"] + sandbox.storeArguments)
            #expect(again.status == 0, "\(again.summary)")
            #expect((try? again.json() as? [String: Any])?["newKeyId"] as? String == firstNewKeyId, "\(again.summary)")
            #expect(try await keyIds(sandbox) == [firstNewKeyId], "no further key was made")
        }

        /// The backend accepted the registration but the store could not record it (here the key
        /// was deleted meanwhile): the error names the dispatch target the backend now holds.
        @Test func aRegistrationThatCannotBeStoredNamesItsDispatchTarget() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = URL(fileURLWithPath: sandbox.store)
            let backend = try DispatchTargetBackendStandIn {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: store.path)) ?? [] {
                    try? FileManager.default.removeItem(at: store.appendingPathComponent(name))
                }
            }
            defer { backend.stop() }
            let keyId = try await sandbox.generateKey()
            let registered = try await sandbox.run(
                ["register", "--server", backend.baseURL.absoluteString, "--device-id", "phone-9", "--key", keyId]
                    + sandbox.storeArguments)
            #expect(registered.status == 1 && registered.out.isEmpty, "\(registered.summary)")
            #expect(
                registered.err.contains("as dispatch target target-1") && registered.err.contains("storing"),
                "\(registered.summary)")
        }

        /// One registration whose backend answers an operation of its own and one redeeming
        /// elsewhere: its own is shown, so the exit is 2 (some failed), not 1 (all failed).
        @Test func aBackendAnsweringAForeignOperationBesideItsOwnIsAPartialFailure() async throws {
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            func operation(_ token: String, _ redeemUrl: String) -> String {
                #"{"creationTimeInEpochMillis":1,"dispatchChannel":"link","payload":{"contentType":"application/json","#
                    + #""version":"1","redeemData":{"token":"\#(token)","redeemUrl":"\#(redeemUrl)"}}}"#
            }
            backend.script.withLock {
                $0.operations = [
                    operation("own-token", "{base}/nevisfido/token/redeem/authentication"),
                    operation("foreign-token", "https://elsewhere.example/nevisfido/token/redeem/authentication"),
                ]
            }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            _ = try await registeredKey(in: sandbox, at: backend.baseURL)
            let fetched = try await sandbox.run(["fetch", "--json"] + sandbox.storeArguments)
            #expect(fetched.status == 2, "\(fetched.summary)")
            let answer = try #require(try fetched.json() as? [String: Any])
            let operations = answer["operations"] as? [[String: Any]] ?? []
            let tokens = operations.map {
                (($0["payload"] as? [String: Any])?["redeemData"] as? [String: Any])?["token"] as? String
            }
            #expect(tokens == ["own-token"], "\(fetched.summary)")
            let errors = answer["errors"] as? [[String: Any]] ?? []
            #expect(errors.map { $0["invalidResponseKind"] as? String } == ["foreignRedeemUrl"], "\(fetched.summary)")
        }

        /// A backend's creation time is printed as the exact UTC date (proleptic Gregorian, also
        /// before 1582), and one beyond four-digit years as its number, marked out of range: never
        /// as a wrong date.
        @Test func creationTimesAreDatedExactlyOrShownAsOutOfRange() async throws {
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            let times: [Int64] = [.max, 1, -12_219_379_200_000, .min]
            backend.script.withLock { script in
                script.operations = times.enumerated().map { index, millis in
                    #"{"creationTimeInEpochMillis":\#(millis),"dispatchChannel":"link","payload":{"#
                        + #""contentType":"application/json","version":"1","redeemData":{"token":"token-\#(index)","#
                        + #""redeemUrl":"{base}/nevisfido/token/redeem/authentication"}}}"#
                }
            }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            _ = try await registeredKey(in: sandbox, at: backend.baseURL)
            let fetched = try await sandbox.run(["fetch"] + sandbox.storeArguments)
            #expect(fetched.status == 0, "\(fetched.summary)")
            let created = fetched.lines.dropFirst().map { String($0.prefix { $0 != " " }) }
            #expect(
                created == [
                    "-9223372036854775808", "1582-10-14T00:00:00.000Z", "1970-01-01T00:00:00.001Z",
                    "9223372036854775807",
                ], "\(fetched.summary)")
            #expect(
                fetched.lines.filter { $0.contains(" ms (out of range)") }.count == 2, "\(fetched.summary)")
        }

        /// Security review: a further dispatch target for a known device needs that device's signature.
        @Test func aFurtherRegistrationIsSignedByTheDevicesOwnKey() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let server = backend.baseURL.absoluteString
            let device = try CLISandbox()
            defer { device.remove() }
            let stranger = try CLISandbox()
            defer { stranger.remove() }

            let first = try await device.generateKey()
            let registered = try await device.run(
                ["register", "--server", server, "--device-id", "phone-1", "--key", first]
                    + device.storeArguments)
            #expect(registered.status == 0, "\(registered.summary)")

            let strangerKey = try await stranger.generateKey()
            let hijack = try await stranger.run(
                ["register", "--server", server, "--device-id", "phone-1", "--key", strangerKey]
                    + stranger.storeArguments)
            #expect(hijack.status == 1 && hijack.err.contains("401"), "\(hijack.summary)")
            #expect(try await keyJSON(stranger, strangerKey)["dispatchTargetId"] is NSNull)

            let second = try await device.generateKey()
            let further = try await device.run(
                ["register", "--server", server, "--device-id", "phone-1", "--key", second, "--json"]
                    + device.storeArguments)
            #expect(further.status == 0, "\(further.summary)")
            #expect(further.err.contains("Signing the registration with key \(first)"), "\(further.summary)")
        }

        /// The same backend spelt otherwise (host case, default port, trailing slash) is the same
        /// backend: before, no key of the device was found to sign with, and the backend refused
        /// the unsigned registration (401).
        @Test func aFurtherRegistrationFindsTheDevicesKeyWhateverTheSpelling() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let port = try #require(backend.baseURL.port)
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let first = try await sandbox.generateKey()
            let registered = try await sandbox.run(
                ["register", "--server", "http://localhost:\(port)", "--device-id", "phone-1", "--key", first]
                    + sandbox.storeArguments)
            #expect(registered.status == 0, "\(registered.summary)")
            let second = try await sandbox.generateKey()
            let respelt = try await sandbox.run(
                ["register", "--server", "HTTP://LocalHost:\(port)/", "--device-id", "phone-1", "--key", second]
                    + sandbox.storeArguments)
            #expect(respelt.status == 0, "\(respelt.summary)")
            #expect(respelt.err.contains("Signing the registration with key \(first)"), "\(respelt.summary)")
        }

        /// Refused when registering (64), before anything is sent:
        /// - a server path that could leave its prefix once decoded: it has no origin to redeem
        ///   in, so every fetched operation would be dropped;
        /// - a port out of range (before, it failed later as a network error, 1);
        /// - a '%' that starts no escape (before, `%zz` was silently registered as `%25zz`).
        @Test(arguments: [
            ("http://127.0.0.1:9/x/..", "'..' segments"), ("http://127.0.0.1:9/a/./b", "'..' segments"),
            ("http://127.0.0.1:9/a%2Fb", "'..' segments"), ("http://127.0.0.1:9/%2e%2e", "'..' segments"),
            ("http://127.0.0.1:99999", "port must be 1 to 65535, not 99999"),
            ("http://127.0.0.1:0", "port must be 1 to 65535, not 0"),
            ("http://127.0.0.1:9/a%zz", "a '%' starts an escape"), ("http://127.0.0.1:9/%4", "a '%' starts an escape"),
        ])
        func aMalformedServerURLIsAUsageError(server: String, reason: String) async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let result = try await sandbox.run(
                ["register", "--server", server, "--device-id", "d", "--key", keyId] + sandbox.storeArguments)
            #expect(result.status == 64 && result.err.contains(reason), "\(result.summary)")
        }

        @Test func unregisteredKeysAndUnreachableBackends() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments
            let keyId = try await sandbox.generateKey()
            let rotate = try await sandbox.run(["rotate", "--key", keyId] + store)
            #expect(rotate.status == 1 && rotate.err.contains("not registered"), "\(rotate.summary)")

            // A backend that is gone: nothing is stored.
            let backend = try ReferenceBackend.start()
            let server = backend.baseURL.absoluteString
            backend.stop()
            let register = try await sandbox.run(
                ["register", "--server", server, "--device-id", "d", "--key", keyId] + store)
            #expect(register.status == 1 && register.err.contains("no answer from"), "\(register.summary)")
            #expect(try await keyJSON(sandbox, keyId)["dispatchTargetId"] is NSNull)

            let plainHTTP = try await sandbox.run(
                ["register", "--server", "http://backend.example", "--device-id", "d", "--key", keyId] + store)
            #expect(plainHTTP.status == 64 && plainHTTP.err.contains("https"), "\(plainHTTP.summary)")
        }
    }
}
