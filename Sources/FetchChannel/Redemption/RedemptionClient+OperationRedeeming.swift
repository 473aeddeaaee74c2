/// The real redeemer: `RedemptionClient.redeem(_:)` already has the shape the pipeline needs.
extension RedemptionClient: OperationRedeeming {}
