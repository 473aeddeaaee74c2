import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Synchronization
import Testing

@testable import FetchChannel

#if canImport(Glibc)
    import Glibc
#endif

extension Practices {
    /// On threads of their own: the pipeline's file writes (each fsynced) block.
    @Suite(.dedicatedThread) struct RedeemedTokenFileTests {
        /// Puts `contents` where the pipeline reads its file, as the pipeline would (0600).
        static func write(_ contents: Data, to file: RedeemedTokenFile) -> Bool {
            FileManager.default.createFile(
                atPath: file.path, contents: contents,
                attributes: [.posixPermissions: 0o600])
        }

        /// The redeemed tokens a pipeline started now on `file` remembers, oldest first.
        static func tokensAfterRestart(
            _ file: RedeemedTokenFile, capacity: Int = RedemptionPipeline.defaultCapacity
        ) async throws -> [String] {
            try await RedemptionPipeline(redeemer: ImmediateRedeemer(), capacity: capacity, persistingTo: file)
                .redeemedTokens
        }

        @Test func aRestartedPipelineRemembersWhatWasRedeemed() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let first = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                _ = await first.redeem(Practices.payload("t1"))
                _ = await first.redeem(Practices.payload("t2"))
                #expect(await first.persistenceFailure == nil)

                let redeemer = ImmediateRedeemer()
                let restarted = try RedemptionPipeline(redeemer: redeemer, persistingTo: file)
                #expect(
                    await restarted.redeem(Practices.payload("t1"))
                        == .duplicate(identity: .onBackend("t1"), state: .redeemed))
                #expect(await restarted.redeemedTokens == ["t1", "t2"])
                #expect(redeemer.totalCalls == 0)
            }
        }

        @Test func onlyTokensThatReachedTheRedeemedSetAreWritten() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let outcomes: [String: RedemptionResult] = [
                    "ok": .success(Practices.answer), "gone": .failure(Practices.alreadyRedeemed),
                    "old": .failure(Practices.expired), "down": .failure(Practices.networkFailure),
                ]
                let pipeline = try RedemptionPipeline(
                    redeemer: ImmediateRedeemer { token, _ in outcomes[token]! }, persistingTo: file)
                for token in ["ok", "old", "gone", "down"] { _ = await pipeline.redeem(Practices.payload(token)) }
                #expect(try await Self.tokensAfterRestart(file) == ["ok", "gone"])
            }
        }

        @Test func loadingKeepsTheNewestTokensThatFitTheCapacity() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let pipeline = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                for index in 1...5 { _ = await pipeline.redeem(Practices.payload("t\(index)")) }
                let smaller = try RedemptionPipeline(redeemer: ImmediateRedeemer(), capacity: 2, persistingTo: file)
                #expect(await smaller.redeemedTokens == ["t4", "t5"])
            }
        }

        /// The file's directory is the application's: another component's temporary files there
        /// (even named as this package's were before) are left alone when a pipeline opens it.
        @Test func anotherComponentsTemporaryFilesAreLeftAlone() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let state = directory.appendingPathComponent("state")
                try FileManager.default.createDirectory(
                    at: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                let foreign = [".tmp-0123456789abcdef", ".tmp-x"].map { state.appendingPathComponent($0) }
                for file in foreign { try Data("theirs".utf8).write(to: file) }
                let pipeline = try RedemptionPipeline(
                    redeemer: ImmediateRedeemer(), persistingTo: RedeemedTokenFile(directory: state))
                _ = await pipeline.redeem(Practices.payload("t1"))
                for file in foreign {
                    #expect(FileManager.default.fileExists(atPath: file.path), "\(file.lastPathComponent) removed")
                }
            }
        }

        @Test func theFileIsPrivateAndItsDirectoryToo() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory.appendingPathComponent("state"))
                let pipeline = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                _ = await pipeline.redeem(Practices.payload("t1"))
                let fileMode = try #require(
                    try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
                let directoryMode = try #require(
                    try FileManager.default.attributesOfItem(atPath: file.directory.path)[.posixPermissions] as? Int)
                #expect(fileMode == 0o600)
                #expect(directoryMode == 0o700)
            }
        }

        @Test func theFileHoldsEachIdentityWithItsOrigin() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let pipeline = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                let elsewhere = PendingOutOfBandOperation.Payload(
                    contentType: "application/json", version: "1",
                    redeemData: .init(token: "t1", redeemUrl: "https://other.example:8443/redeem"))
                _ = await pipeline.redeem(Practices.payload("t1"))
                _ = await pipeline.redeem(elsewhere)
                let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file.path)))
                let contents = try #require(object as? [String: Any])
                #expect(contents["version"] as? Int == 2)
                let redeemed = try #require(contents["redeemed"] as? [[String: String]])
                #expect(
                    redeemed == [
                        ["origin": "https://backend.example:443", "token": "t1"],
                        ["origin": "https://other.example:8443", "token": "t1"],
                    ])
                let restarted = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                #expect(await restarted.redeemed == [.onBackend("t1"), elsewhere.redeemData.identity])
            }
        }

        /// A version 1 file names no origin: its tokens are forgotten, and an operation it held is
        /// refused by the backend as already redeemed, which moves it to the redeemed set (written as version 2).
        @Test func aVersionOneFileLoadsAndItsTokensAreForgotten() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                _ = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)  // creates the directory
                let v1 = Data(#"{"version":1,"tokens":["t1","t2"]}"#.utf8)
                #expect(Self.write(v1, to: file))
                let redeemer = ImmediateRedeemer { _, _ in .failure(Practices.alreadyRedeemed) }
                let pipeline = try RedemptionPipeline(redeemer: redeemer, persistingTo: file)
                #expect(await pipeline.redeemedCount == 0)
                #expect(await pipeline.redeem(Practices.payload("t1")) == .alreadyRedeemed(identity: .onBackend("t1")))
                #expect(redeemer.calls("t1") == 1)
                let restarted = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                #expect(await restarted.redeemed == [.onBackend("t1")])
                let text = try String(contentsOfFile: file.path, encoding: .utf8)
                #expect(text.contains(#""version":2"#))
            }
        }

        @Test(arguments: [
            #"{"version":3,"redeemed":[]}"#, #"{"version":1,"redeemed":[]}"#, #"{"version":2,"tokens":["t1"]}"#,
        ])
        func anotherVersionOrAMismatchedShapeIsRefused(text: String) async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                _ = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                #expect(Self.write(Data(text.utf8), to: file))
                let error = #expect(throws: RedeemedTokenFileError.self) {
                    _ = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                }
                #expect(error?.path == file.path)
                #expect(error?.code == (text.hasPrefix(#"{"version":3"#) ? .unsupportedVersion : .corrupt))
            }
        }

        @Test func aCorruptFileIsRefusedWithItsPath() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                _ = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)  // creates the directory
                #expect(
                    FileManager.default.createFile(
                        atPath: file.path, contents: Data("not json".utf8), attributes: [.posixPermissions: 0o600]))
                let error = #expect(throws: RedeemedTokenFileError.self) {
                    _ = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                }
                #expect(error?.path == file.path)
                #expect(error?.reason.contains("Move it away") == true)
                #expect(error?.code == .corrupt)
            }
        }

        /// No version writes a member twice or a file over the limit: either is corrupt, so the
        /// next write replaces it rather than failing for ever.
        @Test func aRepeatedMemberOrAnOversizedFileIsCorrupt() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                _ = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                let repeated = #"{"version":2,"redeemed":[],"redeemed":[{"origin":"https://a:443","token":"t"}]}"#
                let oversized = Data(count: RedeemedTokenFile.maximumBytes + 1)
                for contents in [Data(repeated.utf8), oversized] {
                    #expect(Self.write(contents, to: file))
                    let error = #expect(throws: RedeemedTokenFileError.self) {
                        _ = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                    }
                    #expect(error?.code == .corrupt, "\(String(describing: error))")
                    #expect(error?.reason.contains("Move it away") == true)
                }
            }
        }

        /// The file never outgrows what loads: the newest identities that fit are written.
        @Test func aWriteKeepsTheNewestIdentitiesThatFit() throws {
            let identities = (0..<100).map { RedemptionIdentity(origin: "https://a.example:443", token: "token-\($0)") }
            let whole = try RedeemedTokenStorage.encoded(identities)
            let limit = whole.count / 2
            let kept = try RedeemedTokenStorage.encoded(identities, maximumBytes: limit)
            #expect(kept.count <= limit)
            let text = String(decoding: kept, as: UTF8.self)
            #expect(text.contains(#""token-99""#))
            #expect(!text.contains(#""token-0""#))
            #expect(try RedeemedTokenStorage.encoded(identities, maximumBytes: 10).count > 10, "empty at worst")
        }

        @Test func aDirectoryOpenToOthersIsRefused() async throws {
            try await Practices.withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o755])
                let error = #expect(throws: RedeemedTokenFileError.self) {
                    _ = try RedemptionPipeline(
                        redeemer: ImmediateRedeemer(), persistingTo: RedeemedTokenFile(directory: directory))
                }
                #expect(error?.reason.contains("chmod 700") == true)
                #expect(error?.code == .insecure)
            }
        }

        @Test(arguments: ["", ".", "..", "a/b", ".fetchchannel-tmp-x", ".fetchchannel-lock"])
        func aFileNameThatIsNotAPlainNameIsRefused(name: String) async {
            await Practices.withTemporaryDirectory { directory in
                #expect(throws: RedeemedTokenFileError(.invalidLocation, path: "", reason: "")) {
                    _ = try RedemptionPipeline(
                        redeemer: ImmediateRedeemer(),
                        persistingTo: RedeemedTokenFile(directory: directory, fileName: name))
                }
            }
        }

        /// Two pipelines on one file stand for two processes (each has its own descriptor and
        /// lock). Before the merge, each write replaced the file with the writer's own set.
        @Test func pipelinesSharingAFileKeepEachOthersRedemptions() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let first = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                let second = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                _ = await first.redeem(Practices.payload("a1"))
                _ = await second.redeem(Practices.payload("b1"))
                _ = await first.redeem(Practices.payload("a2"))
                #expect(await first.persistenceFailure == nil)
                #expect(await second.persistenceFailure == nil)
                #expect(try await Self.tokensAfterRestart(file) == ["a1", "b1", "a2"])
            }
        }

        /// At capacity (the steady state after long use) a write still keeps the other writer's
        /// newest redemption and drops the oldest of all.
        @Test func pipelinesAtCapacityKeepEachOthersNewestRedemptions() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let filler = try RedemptionPipeline(redeemer: ImmediateRedeemer(), capacity: 3, persistingTo: file)
                for token in ["o1", "o2", "o3"] { _ = await filler.redeem(Practices.payload(token)) }
                let first = try RedemptionPipeline(redeemer: ImmediateRedeemer(), capacity: 3, persistingTo: file)
                let second = try RedemptionPipeline(redeemer: ImmediateRedeemer(), capacity: 3, persistingTo: file)
                _ = await second.redeem(Practices.payload("b1"))
                _ = await second.redeem(Practices.payload("b2"))
                _ = await first.redeem(Practices.payload("a1"))
                // Not o2, which the file had dropped while the first pipeline still held it.
                #expect(try await Self.tokensAfterRestart(file, capacity: 3) == ["b1", "b2", "a1"])
            }
        }

        /// A pipeline with a small capacity sharing the file with one of a larger capacity
        /// does not cut the file down to its own size: its write keeps as many as the file
        /// held, dropping the oldest for its own, as the larger one does at its capacity.
        @Test func aSmallerWriterDoesNotCutDownWhatALargerOneStored() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let large = try RedemptionPipeline(redeemer: ImmediateRedeemer(), capacity: 100, persistingTo: file)
                let small = try RedemptionPipeline(redeemer: ImmediateRedeemer(), capacity: 2, persistingTo: file)
                for index in 1...5 { _ = await large.redeem(Practices.payload("a\(index)")) }
                _ = await small.redeem(Practices.payload("b1"))
                #expect(await small.persistenceFailure == nil)
                #expect(try await Self.tokensAfterRestart(file, capacity: 100) == ["a2", "a3", "a4", "a5", "b1"])
                _ = await large.redeem(Practices.payload("a6"))
                #expect(
                    try await Self.tokensAfterRestart(file, capacity: 100) == ["a2", "a3", "a4", "a5", "b1", "a6"])
            }
        }

        /// A file that became corrupt is replaced by the pipeline's whole set, not only by what
        /// it redeemed since its last write; the damaged file is kept beside it, not lost (it may
        /// hold what other processes redeemed), and the pipeline says so.
        @Test func aFileThatBecameCorruptIsKeptAsideAndReplacedByTheWholeSet() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let pipeline = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                _ = await pipeline.redeem(Practices.payload("t1"))
                _ = await pipeline.redeem(Practices.payload("t2"))
                #expect(await pipeline.corruptFileReplaced == nil)
                let damaged = Data(#"{"version":2,"redeemed":[{"origin":"https://other.example:443","#.utf8)
                try #require(Self.write(damaged, to: file))
                _ = await pipeline.redeem(Practices.payload("t3"))
                #expect(await pipeline.persistenceFailure == nil)
                #expect(try await Self.tokensAfterRestart(file) == ["t1", "t2", "t3"])
                func copies() throws -> [String] {
                    try FileManager.default.contentsOfDirectory(atPath: directory.path)
                        .filter { $0.hasPrefix(RedeemedTokenFile.defaultFileName + ".corrupt-") }.sorted()
                }
                let copy = try #require(try copies().first, "the damaged file is kept")
                #expect(try Data(contentsOf: directory.appendingPathComponent(copy)) == damaged)
                let notice = await pipeline.corruptFileReplaced
                #expect(notice?.code == .corrupt)
                #expect(notice?.reason.contains(copy) == true, "\(String(describing: notice))")
                // A second damage keeps a second copy: the first is not written over.
                try #require(Self.write(Data("also damaged".utf8), to: file))
                _ = await pipeline.redeem(Practices.payload("t4"))
                #expect(try copies().count == 2)
                #expect(try Data(contentsOf: directory.appendingPathComponent(copy)) == damaged)
                #expect(try await Self.tokensAfterRestart(file) == ["t1", "t2", "t3", "t4"])
            }
        }

        /// A file another version wrote after the pipeline started is not replaced: the write
        /// fails and says why, and the file keeps what it held.
        @Test func aFileThatNoLongerReadsIsNotOverwritten() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let pipeline = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                let newer = Data(#"{"version":3,"redeemed":[]}"#.utf8)
                try #require(Self.write(newer, to: file))
                #expect(await pipeline.redeem(Practices.payload("t1")).code == "redeemed")
                #expect(await pipeline.persistenceFailure?.code == .unsupportedVersion)
                #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == newer)
                #expect(await pipeline.state(of: .onBackend("t1")) == .redeemed)
                // Once the file is gone, the next change writes what the failed one could not.
                try FileManager.default.removeItem(atPath: file.path)
                _ = await pipeline.redeem(Practices.payload("t2"))
                #expect(await pipeline.persistenceFailure == nil)
                #expect(try await Self.tokensAfterRestart(file) == ["t1", "t2"])
            }
        }

        /// A write waits for another writer's lock (up to 30 s) on a thread of its own: the
        /// pipeline answers meanwhile, a redemption is reported only once its write is done, and
        /// one redeemed during the wait is written by the next write.
        @Test func aWriteWaitingForTheLockHoldsNeitherThePipelineNorOtherRedemptions() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let pipeline = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                // Another process's writer: a lock of its own on the directory's lock file.
                let lockPath = directory.appendingPathComponent(KeyStoreDirectory.storeLockName).path
                let lock = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
                try #require(lock >= 0)
                defer { close(lock) }
                try #require(flock(lock, LOCK_EX) == 0)

                final class Reports: Sendable { let count = Atomic(0) }
                let reported = Reports()
                func redeemed(_ token: String) async {
                    while await pipeline.state(of: .onBackend(token)) != .redeemed { await Task.yield() }
                }
                let first = Task {
                    defer { reported.count.add(1, ordering: .relaxed) }
                    return await pipeline.redeem(Practices.payload("t1"))
                }
                await redeemed("t1")
                let second = Task {
                    defer { reported.count.add(1, ordering: .relaxed) }
                    return await pipeline.redeem(Practices.payload("t2"))
                }
                await redeemed("t2")
                #expect(await pipeline.persistenceFailure == nil)
                // Not settled before it is written: a fetch's choice does not start beside it.
                #expect(!pipeline.activity.isIdle)
                #expect(await pipeline.redeemIfIdle(Practices.operation("t3", created: 1)) == nil)
                #expect(reported.count.load(ordering: .relaxed) == 0, "reported before the write")

                try #require(flock(lock, LOCK_UN) == 0)
                #expect(await first.value.code == "redeemed")
                #expect(await second.value.code == "redeemed")
                #expect(await pipeline.persistenceFailure == nil)
                #expect(try await Self.tokensAfterRestart(file) == ["t1", "t2"])
            }
        }

        @Test func aFailedWriteIsReportedAndTheSetInMemoryStaysRight() async throws {
            try await Practices.withTemporaryDirectory { directory in
                let file = RedeemedTokenFile(directory: directory)
                let pipeline = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                // A directory where the file should be: the write reads it first and refuses it.
                try FileManager.default.createDirectory(atPath: file.path, withIntermediateDirectories: false)
                #expect(await pipeline.redeem(Practices.payload("t1")).code == "redeemed")
                let failure = await pipeline.persistenceFailure
                #expect(failure?.path == file.path)
                #expect(failure?.code == .insecure, "\(String(describing: failure))")
                #expect(await pipeline.state(of: .onBackend("t1")) == .redeemed)
                // The next change writes what the failed write could not, ahead of its own.
                try FileManager.default.removeItem(atPath: file.path)
                #expect(await pipeline.redeem(Practices.payload("t2")).code == "redeemed")
                #expect(await pipeline.persistenceFailure == nil)
                #expect(try await Self.tokensAfterRestart(file) == ["t1", "t2"])
            }
        }

        /// A `..` after a symbolic link leads to the link target's parent, as `ls` resolves it:
        /// the file is written where the path names, not where standardizing it as text put it.
        @Test func aParentSegmentAfterASymbolicLinkIsLeftToTheFileSystem() async throws {
            try await Practices.withTemporaryDirectory { root in
                let target = root.appendingPathComponent("real/sub", isDirectory: true)
                try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(
                    atPath: root.appendingPathComponent("link").path, withDestinationPath: target.path)
                let file = RedeemedTokenFile(directory: URL(fileURLWithPath: root.path + "/link/../state"))
                #expect(file.path == root.path + "/link/../state/" + RedeemedTokenFile.defaultFileName)
                let pipeline = try RedemptionPipeline(redeemer: ImmediateRedeemer(), persistingTo: file)
                _ = await pipeline.redeem(Practices.payload("t1"))
                #expect(await pipeline.persistenceFailure == nil)
                let written = root.appendingPathComponent("real/state/" + RedeemedTokenFile.defaultFileName)
                #expect(FileManager.default.fileExists(atPath: written.path))
                #expect(try await Self.tokensAfterRestart(file) == ["t1"])
            }
        }

        /// The directory is checked as a key store's is, and named for what it holds.
        @Test func aDirectoryOthersCanReadIsRefusedAsTheRedeemedTokenStore() async throws {
            try await Practices.withTemporaryDirectory { root in
                let directory = root.appendingPathComponent("shared")
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
                let error = #expect(throws: RedeemedTokenFileError.self) {
                    _ = try RedemptionPipeline(
                        redeemer: ImmediateRedeemer(), persistingTo: RedeemedTokenFile(directory: directory))
                }
                let text = error.map { "\($0)" } ?? ""
                #expect(text.contains("The redeemed-token store directory \(directory.path) is accessible"), "\(text)")
                #expect(!text.contains("key store"), "\(text)")
            }
        }
    }
}
