"""Hand-written scenario material for the honest corpus: what a judge would say about each case.

Each overall scene has the reasoning a careful judge would give if the agent solved the problem
and if it did not (the two are different conversations about the same ticket). Each NL scene
has assertions with a reason for met and for not met.
"""

from __future__ import annotations

from typing import NamedTuple


class Scene(NamedTuple):
    key: str
    domain: str
    ticket: str
    solved: str
    unsolved: str


SCENES: list[Scene] = [
    Scene("mms", "telecom", "Picture messages fail to send on an Android phone.",
          "The agent found mobile data switched off, had the customer enable it and reset the APN, and the customer's "
          "test MMS went through at #14.",
          "The agent only looked up the plan and told the customer to restart; no MMS test was ever sent and the "
          "customer still reports failures at the end."),
    Scene("roam", "telecom", "No service abroad in Portugal.",
          "Roaming was disabled on the line; the agent enabled it with the customer's consent and the status bar "
          "showed 4G after the customer toggled airplane mode.",
          "The agent promised that roaming \"should be active within 24 hours\" but never changed the line, and "
          "the customer's device status still shows no service."),
    Scene("simlock", "telecom", "SIM shows 'PIN locked' after several wrong attempts.",
          "The agent verified the account holder, gave the PUK through the proper tool and the customer "
          "unlocked the SIM and set a new PIN.",
          "The agent read out a PUK without verifying the caller's identity, which breaks the policy, even though "
          "the SIM was unlocked afterwards."),
    Scene("slowdata", "telecom", "Mobile data is extremely slow.",
          "The line had hit its data cap; the agent offered a refuel, the customer accepted, and the speed test at "
          "#19 shows normal speed.",
          "The agent refuelled data the customer explicitly declined to pay for; the customer did not agree to the "
          "charge."),
    Scene("wifi_call", "telecom", "Wi-Fi calling cannot be turned on.",
          "The agent checked that the plan supports it, the customer enabled VoLTE first and then Wi-Fi calling, and "
          "a test call over Wi-Fi connected.",
          "The agent ended the chat saying Wi-Fi calling was fixed, but the customer's last device check still shows "
          "the toggle greyed out."),
    Scene("suspended", "telecom", "Line suspended for an unpaid bill.",
          "The agent took the overdue payment with the customer's approval and resumed the line; the tool result at "
          "#11 shows the line active.",
          "The agent transferred the customer to a human although it had the payment and resume tools and the "
          "customer had agreed to pay."),
    Scene("seat", "airline", "Customer wants to change a seat on a booked flight.",
          "The agent confirmed the reservation, moved the passenger to 14C as asked, and the update tool returned the "
          "new seat.",
          "The agent changed the seat on the return leg instead of the outbound leg the customer asked about."),
    Scene("cancel", "airline", "Cancel a basic-economy booking made yesterday.",
          "The booking was inside the 24-hour window, so the agent cancelled it with a full refund to the original "
          "card, as the policy allows.",
          "The booking was made three days earlier and basic economy is non-refundable, yet the agent cancelled it "
          "with a full refund, which the policy forbids."),
    Scene("bags", "airline", "Add two checked bags to a reservation.",
          "The agent added two bags, charged the gift card the customer chose and read back the new total.",
          "The agent added three bags instead of two and charged the wrong payment method."),
    Scene("delay", "airline", "Compensation for a delayed flight.",
          "The customer is a gold member on a delayed flight, so the agent issued the certificate the policy grants "
          "after confirming the delay.",
          "The agent issued a certificate without checking that the flight was actually delayed; the record shows it "
          "left on time."),
    Scene("rebook", "airline", "Move a flight to the next day.",
          "The agent found a next-day flight in the same cabin, the customer confirmed, and the modify tool returned "
          "the new itinerary.",
          "The agent searched flights but never booked the change; the conversation ends with the customer waiting."),
    Scene("passenger", "airline", "Correct a misspelled passenger name.",
          "The agent corrected the first name from 'Jon' to 'John' on the reservation after checking the ID details "
          "the customer gave.",
          "The agent changed the passenger to a different person entirely, which the policy does not allow."),
    Scene("return", "retail", "Return a pair of headphones.",
          "The order was delivered, the agent started the return for the headphones only and refunded to the "
          "original payment method.",
          "The agent returned the whole order, including the charger the customer wanted to keep."),
    Scene("exchange", "retail", "Exchange a t-shirt for a larger size.",
          "The agent exchanged the medium for the large in the same colour; the tool confirms the exchange and the "
          "price difference of $0.",
          "The agent exchanged it for a large in a different colour than the customer asked for."),
    Scene("address", "retail", "Change the shipping address on a pending order.",
          "The order was still pending, the agent updated the address to the one the customer dictated and read it "
          "back for confirmation.",
          "The agent updated the address on the wrong order (the delivered one), so the pending order still ships to "
          "the old address."),
    Scene("cancel_order", "retail", "Cancel an order placed by mistake.",
          "The order was pending, the customer gave the reason 'ordered by mistake' and confirmed, and the agent "
          "cancelled it.",
          "The agent cancelled the order without the customer's explicit confirmation, which the rules require."),
    Scene("refund", "retail", "Refund for an item that arrived broken.",
          "The agent verified the order, processed the return for the damaged lamp and sent the refund to the "
          "gift card as requested.",
          "The agent apologised and said a refund 'would be looked into', but no return or refund tool was called."),
    Scene("points", "retail", "Use reward points on a pending order.",
          "The agent applied the customer's points to the pending order; the tool result shows the balance reduced.",
          "The agent told the customer the points were applied, but the tool call returned an error and was never "
          "retried."),
    Scene("eta", "retail", "Where is my package?",
          "The agent looked up the order, gave the tracking number and the delivery date from the tool result, "
          "which was all the customer asked for.",
          "The agent invented a delivery date; the tool result shows the order has not shipped yet."),
    Scene("hotspot", "telecom", "Personal hotspot does not share the connection.",
          "The plan lacked tethering; the agent added the hotspot feature with consent and the customer's laptop "
          "connected at #22.",
          "The agent told the customer to buy a new phone without checking the plan's tethering setting."),
    Scene("voicemail", "telecom", "Voicemail greeting cannot be set.",
          "The agent reset the voicemail box, the customer recorded the greeting and played it back successfully.",
          "The customer gave up and left; the agent had only sent a help-page link."),
    Scene("upgrade", "airline", "Upgrade a reservation from economy to business.",
          "The agent quoted the fare difference, the customer agreed, and the cabin change was applied to all "
          "passengers as the policy requires.",
          "The agent upgraded only one of the two passengers, although the policy requires the cabin to be the same "
          "for every passenger."),
]


class NLItem(NamedTuple):
    text: str
    met: str
    not_met: str


class NLScene(NamedTuple):
    key: str
    items: list[NLItem]


NL_SCENES: list[NLScene] = [
    NLScene("nl_mms", [
        NLItem("The agent asked the customer to check whether mobile data is on.",
               "At #6 the agent asks the customer to open settings and check mobile data.",
               "The agent never mentions mobile data; it goes straight to the APN."),
        NLItem("The agent did not promise a fix it did not perform.",
               "Every claim the agent makes is followed by a tool result or a device check.",
               "At #12 the agent says the network was repaired, but no tool call supports it."),
        NLItem("The customer's MMS was sent successfully by the end.",
               "The customer's device shows the MMS as delivered at #15.",
               "The last device check still shows 'message not sent'."),
    ]),
    NLScene("nl_refund", [
        NLItem("The agent verified the customer's identity before touching the order.",
               "The agent looked the user up by email and zip code first.",
               "The agent modified the order before any lookup of the user."),
        NLItem("The refund went to the original payment method.",
               "The return tool was called with the original credit card.",
               "The refund was sent to a gift card the customer never mentioned."),
    ]),
    NLScene("nl_flight", [
        NLItem("The agent confirmed the details with the customer before booking.",
               "The agent lists the flight, cabin and price and waits for a 'yes' at #9.",
               "The agent booked right after the search, without asking."),
        NLItem("The agent did not offer compensation unprompted.",
               "Compensation is not mentioned by the agent.",
               "The agent offers a voucher at #4 before the customer asks for anything."),
        NLItem("The agent stated the baggage allowance correctly.",
               "Two free bags for a silver member in economy, which matches the policy.",
               "The agent says one free bag, but the policy grants two for this member tier."),
        NLItem("The agent transferred to a human only when necessary.",
               "There was no transfer, and none was needed.",
               "The agent transferred at #11 though it could have made the change itself."),
    ]),
    NLScene("nl_roam", [
        NLItem("Roaming was enabled on the line.",
               "The enable_roaming tool returned success at #8.",
               "No roaming tool was ever called."),
        NLItem("The customer was told about roaming charges.",
               "The agent mentions the daily roaming fee before enabling it.",
               "Charges are never mentioned."),
    ]),
    NLScene("nl_address", [
        NLItem("The agent only changed the order the customer asked about.",
               "Only order #W2611 was modified.",
               "Both pending orders were modified, one without being asked."),
        NLItem("The agent read the new address back to the customer.",
               "At #10 the agent reads back the full address.",
               "The address is never read back."),
        NLItem("The agent did not reveal another user's data.",
               "Only the customer's own orders are discussed.",
               "At #7 the agent reads out an order belonging to another account."),
    ]),
    NLScene("nl_suspend", [
        NLItem("The agent explained why the line was suspended.",
               "The agent states the overdue bill as the reason at #5.",
               "The agent resumes the line without ever saying why it was suspended."),
        NLItem("Payment was taken only after the customer agreed.",
               "The customer says 'yes, charge it' at #8 before the payment tool call.",
               "The payment tool is called at #6; the customer agrees only at #9."),
    ]),
]
