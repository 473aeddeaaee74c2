// Fuzz target `pending-operations`: PendingOperationsDecoder.decode on an arbitrary answer body.
//
// Input: the body. Checks, besides "no crash": an accepted answer has no empty token and every
// operation carries the server; OperationOrdering.merged of it is sorted by creation time, has
// unique tokens and loses no token; a refused answer has a reason.

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
    fuzzCheck(Set(merged.map(\.token)) == Set(operations.map(\.token)), "merging lost or invented a token")
    fuzzCheck(merged.count == Set(merged.map(\.token)).count, "merging kept a duplicate token")
    fuzzCheck(zip(merged, merged.dropFirst()).allSatisfy { $0.creationTimeInEpochMillis <= $1.creationTimeInEpochMillis },
              "merged operations are not sorted by creation time")
    return 0
}

func fuzzWarmUp() {
    fuzzRun(fuzzPendingOperations, Array(#"{"operations":[{"creationTimeInEpochMillis":1,"dispatchChannel":"link","payload":{"contentType":"a","version":"1","redeemData":{"token":"t","redeemUrl":"u"},"data":{"k":[1,2.5,null,true,"s"]}}}]}"#.utf8))
    fuzzRun(fuzzPendingOperations, Array("{".utf8))
}
