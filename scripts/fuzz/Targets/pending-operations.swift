// Fuzz target `pending-operations`: PendingOperationsDecoder.decode on an arbitrary answer body.
//
// Input: the body. Checks, besides "no crash": an accepted answer has no empty token and every
// operation carries the server; OperationOrdering.merged of it is sorted by creation time, has
// unique identities (origin, token: the same token at two origins is two operations) and loses no
// identity; a refused answer has a reason.

import Foundation

@testable import FetchChannel

private let server = "https://backend.example"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPendingOperations(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = Data(fuzzBytes(data, size))
    let operations: [PendingOutOfBandOperation]
    do {
        operations = try PendingOperationsDecoder.decode(body, server: server)
    } catch {
        fuzzCheck(!error.reason.isEmpty, "a refusal without a reason")
        return 0
    }
    for operation in operations {
        fuzzCheck(!operation.token.isEmpty, "accepted an empty token")
        fuzzCheck(operation.server == server, "operation without its server")
    }
    let merged = OperationOrdering.merged([operations, operations])
    fuzzCheck(Set(merged.map(\.identity)) == Set(operations.map(\.identity)), "merging lost or invented an operation")
    fuzzCheck(merged.count == Set(merged.map(\.identity)).count, "merging kept a duplicate identity")
    fuzzCheck(zip(merged, merged.dropFirst()).allSatisfy { $0.creationTimeInEpochMillis <= $1.creationTimeInEpochMillis },
              "merged operations are not sorted by creation time")
    return 0
}

func fuzzWarmUp() {
    fuzzRun(fuzzPendingOperations, Array(#"{"operations":[{"creationTimeInEpochMillis":1,"dispatchChannel":"link","payload":{"contentType":"a","version":"1","redeemData":{"token":"t","redeemUrl":"u"},"data":{"k":[1,2.5,null,true,"s"]}}}]}"#.utf8))
    fuzzRun(fuzzPendingOperations, Array("{".utf8))
}
