import Testing

@testable import FetchChannel

extension Practices {
    @Suite struct ChannelPolicyTests {
        @Test func pushOnlyAdmitsPushAlone() {
            #expect(ChannelPolicy.pushOnly.admits(.pushNotification))
            #expect(!ChannelPolicy.pushOnly.admits(.link))
            #expect(!ChannelPolicy.pushOnly.admits(.qrCode))
            #expect(!ChannelPolicy.pushOnly.admits(.other("sms")))
        }

        @Test func accessibilityAdmitsPushLinkAndQRCodeButNoUnknownChannel() {
            #expect(ChannelPolicy.accessibility.admits(.pushNotification))
            #expect(ChannelPolicy.accessibility.admits(.link))
            #expect(ChannelPolicy.accessibility.admits(.qrCode))
            #expect(!ChannelPolicy.accessibility.admits(.other("sms")))
        }

        /// One list over every channel: each policy's eligible list and choice, with redeemed and
        /// in-progress operations left out.
        @Test func selectionFiltersByPolicyAndStateAndChoosesTheLatest() {
            let operations = [
                Practices.operation("push-old", created: 100, channel: .pushNotification),
                Practices.operation("qr", created: 200, channel: .qrCode),
                Practices.operation("push-redeemed", created: 250, channel: .pushNotification),
                Practices.operation("link", created: 300, channel: .link),
                Practices.operation("push-busy", created: 350, channel: .pushNotification),
                Practices.operation("sms", created: 400, channel: .other("sms")),
                Practices.operation("push-new", created: 320, channel: .pushNotification),
            ]
            let states: [RedemptionIdentity: RedemptionState] = [
                .onBackend("push-redeemed"): .redeemed, .onBackend("push-busy"): .inProgress,
                // The same token redeemed at another origin is another operation: push-old stays eligible.
                RedemptionIdentity(origin: "https://other.example:443", token: "push-old"): .redeemed,
            ]
            let push = OperationSelection.eligible(operations, policy: .pushOnly, states: states)
            #expect(push.map(\.token) == ["push-old", "push-new"])
            let all = OperationSelection.eligible(operations, policy: .accessibility, states: states)
            #expect(all.map(\.token) == ["push-old", "qr", "link", "push-new"])
            #expect(all.last?.token == "push-new")
        }

        @Test func equalCreationTimesKeepTheFetchedOrder() {
            let operations = [
                Practices.operation("b", created: 5), Practices.operation("a", created: 5),
                Practices.operation("c", created: 1),
            ]
            #expect(
                OperationSelection.eligible(operations, policy: .pushOnly, states: [:]).map(\.token) == ["c", "b", "a"])
        }
    }
}
