"""The sensitive-material detector: what it must catch, what it must leave alone."""

from __future__ import annotations

import time

import pytest

from apps.vault.detect import (
    EntryType,
    Sensitivity,
    aba_routing_valid,
    card_brand,
    iban_valid,
    luhn_valid,
    redact_sensitive,
)

pytestmark = pytest.mark.unit

CREDENTIAL, API_KEY, CARD = EntryType.CREDENTIAL, EntryType.API_KEY, EntryType.PAYMENT_CARD
BANK, GOV, PHONE = EntryType.BANK_ACCOUNT, EntryType.GOVERNMENT_ID, EntryType.PHONE_NUMBER
ADDRESS, EMAIL = EntryType.ADDRESS, EntryType.EMAIL

# (text, entry type, the secret, its caption)
FOUND = [
    ("My password for the bank website is hunter2.", CREDENTIAL, "hunter2", "password for the bank website"),
    ("my password is sunshine", CREDENTIAL, "sunshine", "password"),
    ("pw: Tr0ub4dor&3", CREDENTIAL, "Tr0ub4dor&3", "password"),
    ("PWD=swordfish", CREDENTIAL, "swordfish", "password"),
    ("DB_PASSWORD=s3cr3t!x in the env file", CREDENTIAL, "s3cr3t!x", "password"),
    ('my wifi password is "blue Elephant 42"', CREDENTIAL, "blue Elephant 42", "wifi password"),
    (
        "My Chase online banking password is 'correct horse'",
        CREDENTIAL,
        "correct horse",
        "Chase online banking password",
    ),
    ('{"password": "p@ssw0rd!", "user": "x"}', CREDENTIAL, "p@ssw0rd!", "password"),
    ("passphrase: “tea for two”", CREDENTIAL, "tea for two", "passphrase"),
    ("the passcode to the gym locker is 5521", CREDENTIAL, "5521", "passcode to the gym locker"),
    ("My PIN is 4821.", CREDENTIAL, "4821", "PIN"),
    ("card security code: 937", CREDENTIAL, "937", "security code"),
    ("exp 12/27 cvv 123", CREDENTIAL, "123", "card security code"),
    ("postgres://admin:hunter22@db.example.com:5432/app", CREDENTIAL, "hunter22", "password in a connection URL"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        CREDENTIAL,
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "private key",
    ),
    (
        "my openai api key is sk-proj-abcdefghijklmnopqrstuvwxyz123456",
        API_KEY,
        "sk-proj-abcdefghijklmnopqrstuvwxyz123456",
        "openai API key",
    ),
    ("use sk-abcdefghijklmnopqrstuvwxyz0123 here", API_KEY, "sk-abcdefghijklmnopqrstuvwxyz0123", "OpenAI API key"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", API_KEY, "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe secret key"),
    ("key AKIAIOSFODNN7EXAMPLE in us-east-1", API_KEY, "AKIAIOSFODNN7EXAMPLE", "AWS access key ID"),
    (
        "aws secret access key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        API_KEY,
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "secret access key",
    ),
    (
        "token ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ12",
        API_KEY,
        "ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ12",
        "GitHub token",
    ),
    ("Slack: xoxb-123456789012-abcdefghijkl", API_KEY, "xoxb-123456789012-abcdefghijkl", "Slack token"),
    (
        "Google AIzaSyA1234567890abcdefghijklmnopqrstuv",
        API_KEY,
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "Google API key",
    ),
    (
        "client_secret=9f8e7d6c5b4a39281706f5e4d3c2b1a0&x=1",
        API_KEY,
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "client secret",
    ),
    ("Authorization: Bearer 0a1b2c3d4e5f6a7b8c9d0e1f", API_KEY, "0a1b2c3d4e5f6a7b8c9d0e1f", "bearer token"),
    ("Card 4111 1111 1111 1111 expires soon", CARD, "4111 1111 1111 1111", "Visa card ending in 1111"),
    ("my Mastercard 5555555555554444.", CARD, "5555555555554444", "Mastercard card ending in 4444"),
    ("Amex 3782 822463 10005", CARD, "3782 822463 10005", "American Express card ending in 0005"),
    ("Discover 6011-1111-1111-1117 please", CARD, "6011-1111-1111-1117", "Discover card ending in 1117"),
    ("IBAN DE89 3704 0044 0532 0130 00 please", BANK, "DE89 3704 0044 0532 0130 00", "IBAN (DE)"),
    ("wire to GB82WEST12345698765432", BANK, "GB82WEST12345698765432", "IBAN (GB)"),
    ("checking account number is 123456789", BANK, "123456789", "checking account number"),
    ("my savings account #: 00123456789", BANK, "00123456789", "savings account number"),
    ("acct no. 987654321", BANK, "987654321", "account number"),
    ("routing number 021000021", BANK, "021000021", "bank routing number"),
    ("sort code 12-34-56", BANK, "12-34-56", "bank sort code"),
    ("my SSN is 123-45-6789", GOV, "123-45-6789", "US social security number"),
    ("social security number 078051120", GOV, "078051120", "US social security number"),
    ("passport number is X12345678", GOV, "X12345678", "passport number"),
    ("my driver's license number is D1234567", GOV, "D1234567", "driver's license number"),
    ("email me at jane.doe+work@example.co.uk!", EMAIL, "jane.doe+work@example.co.uk", "email address"),
    ("call me at (555) 123-4567 tonight", PHONE, "(555) 123-4567", "phone number"),
    ("the hotline is 1-800-555-0199", PHONE, "1-800-555-0199", "phone number"),
    ("office +44 20 7946 0958", PHONE, "+44 20 7946 0958", "phone number"),
    ("whatsapp +4915112345678", PHONE, "+4915112345678", "phone number"),
    ("phone: 5551234567", PHONE, "5551234567", "phone number"),
    ("text me on 07700 900123", PHONE, "07700 900123", "phone number"),
    ("I live at 221B Baker Street, London", ADDRESS, "221B Baker Street, London", "street address"),
    (
        "Ship it to 350 5th Avenue, Apt 4B, New York, NY 10118 by Friday.",
        ADDRESS,
        "350 5th Avenue, Apt 4B, New York, NY 10118",
        "street address",
    ),
    (
        "HQ: 1600 Amphitheatre Parkway, Mountain View, CA 94043",
        ADDRESS,
        "1600 Amphitheatre Parkway, Mountain View, CA 94043",
        "street address",
    ),
    ("I live 5 minutes away at 12 oak lane", ADDRESS, "12 oak lane", "street address"),
    ("Send it to PO Box 1234, Springfield, IL 62704", ADDRESS, "PO Box 1234, Springfield, IL 62704", "PO box address"),
]

# Ordinary text: numbers, dates, prices, counts, measurements, identifiers that are not secrets.
ORDINARY = [
    "I bought 3 tickets for $20 on 7 May 2023.",
    "We drove 120 miles and used 10 gallons of gas.",
    "The meeting is on 05/07/2023 at 10:30 AM in Room 204.",
    "Meeting on 2023-05-07, order #123456, version 1.2.3, pi is 3.14159.",
    "My flight UA 1234 departs at 6:45 pm from gate B12.",
    "The invoice total was $1,234.56 and tax 8.25%.",
    "Call me tomorrow, I'll be free after 5.",
    "The password is too long, so I reset it yesterday.",
    "My password was changed last week.",
    "the password is expired",
    "my password is not something I share",
    "I forgot my password again.",
    "Your password must be at least 12 characters.",
    "password: ********",
    "The token is valid for 30 days.",
    "The secret is that I love jazz.",
    "She lives 3 blocks from the Empire State Building.",
    "I walked 2 miles down Ocean Avenue with my dog.",
    "I ran 5 miles down Main Street and it cost $1,299.99 for 2 people.",
    "The score was 21-14 and attendance 45,000.",
    "In 1999-2003 I lived in Boston.",
    "Order number 1234567890 shipped.",
    "My account was locked after 3 attempts.",
    "I have 2 bank accounts and 1 credit card.",
    "He was born on 12-25-1990 and is 33 years old.",
    "The Apollo 11 mission landed on July 20, 1969.",
    "Temperature was 98.6 F, weight 150 lbs, height 5'11\".",
    "The stock rose +3.5% to 145.20; +3.14159265 is not a phone.",
    "Version 2.14.3 was released; build 20231105.",
    "My zip code is 94105.",
    "Kickoff at 7 pm, Section 112 Row 5 Seat 9.",
    "UUID 123e4567-e89b-12d3-a456-426614174000 and commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
    "Bought 1000 shares at 52.10 each, total 52100.",
    "Marathon time 3:45:12, pace 8:35.",
    "The pin is stuck in the door.",
    "My passport expires in 2030.",
    "I paid with my Visa card yesterday.",
    "ISBN 978-3-16-148410-0 and population 8336817.",
    "Tickets 4111 and 1111 for section 1111.",
    "Order 4111 1111 1111 1112 is not a valid card.",
    "Reference DE00 3704 0044 0532 0130 00 has a wrong check digit.",
    "routing number 123456789 fails its checksum.",
    "He bought 3 Supreme Pizzas for the 4 of us.",
]


@pytest.mark.parametrize(("text", "entry_type", "value", "caption"), FOUND)
def test_finds_the_secret_with_a_safe_caption(text: str, entry_type: EntryType, value: str, caption: str) -> None:
    result = redact_sensitive(text)
    [detection] = result.detections
    assert (detection.entry_type, detection.value, detection.caption) == (entry_type, value, caption)
    assert text[detection.span[0] : detection.span[1]] == value
    assert value not in result.text and value not in detection.caption
    assert detection.placeholder == f"[vault:{entry_type}#1]"
    assert result.text == text[: detection.span[0]] + detection.placeholder + text[detection.span[1] :]


@pytest.mark.parametrize("text", ORDINARY)
def test_leaves_ordinary_text_alone(text: str) -> None:
    result = redact_sensitive(text)
    assert result.detections == ()
    assert result.text == text


def test_sensitivity_levels() -> None:
    result = redact_sensitive("pw: Tr0ub4dor&3, card 4111111111111111, mail a@example.com, call 555-123-4567")
    assert [(d.entry_type, d.sensitivity) for d in result.detections] == [
        (CREDENTIAL, Sensitivity.HIGH),
        (CARD, Sensitivity.HIGH),
        (EMAIL, Sensitivity.MEDIUM),
        (PHONE, Sensitivity.MEDIUM),
    ]


def test_placeholders_are_numbered_per_type_and_shared_by_equal_values() -> None:
    text = "pw: alpha123, then pw: beta456; mail x@example.com and pw: alpha123 again"
    result = redact_sensitive(text)
    assert result.text == (
        "pw: [vault:credential#1], then pw: [vault:credential#2]; mail [vault:email#1] and pw: [vault:credential#1] again"
    )
    assert [d.placeholder for d in result.detections] == [
        "[vault:credential#1]",
        "[vault:credential#2]",
        "[vault:email#1]",
        "[vault:credential#1]",
    ]


def test_a_secret_repeated_without_its_key_word_is_redacted_too() -> None:
    result = redact_sensitive("My PIN is 4821. Don't forget: 4821! Not 48210 though.")
    assert result.text == "My PIN is [vault:credential#1]. Don't forget: [vault:credential#1]! Not 48210 though."
    assert [d.span for d in result.detections] == [(10, 14), (30, 34)]


def test_several_kinds_in_one_message_keep_their_order_and_spans() -> None:
    text = (
        "Hi! My password for the bank website is hunter2, my card is 4111 1111 1111 1111, "
        "call me at 555-123-4567 or write to 221B Baker Street, London. SSN 123-45-6789."
    )
    result = redact_sensitive(text)
    assert [d.entry_type for d in result.detections] == [CREDENTIAL, CARD, PHONE, ADDRESS, GOV]
    assert all(text[d.span[0] : d.span[1]] == d.value for d in result.detections)
    assert result.text == (
        "Hi! My password for the bank website is [vault:credential#1], my card is [vault:payment_card#1], "
        "call me at [vault:phone_number#1] or write to [vault:address#1]. SSN [vault:government_id#1]."
    )


def test_redaction_is_deterministic_and_idempotent() -> None:
    text = "pw: hunter2! key AKIAIOSFODNN7EXAMPLE, password: [vault:credential#9]"
    first, second = redact_sensitive(text), redact_sensitive(text)
    assert first == second
    assert [d.value for d in first.detections] == ["hunter2!", "AKIAIOSFODNN7EXAMPLE"]
    assert redact_sensitive(first.text).detections == ()


def test_checksums() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert card_brand("4111111111111111") == "Visa" and card_brand("9111111111111111") is None
    assert card_brand("2221000000000009") == "Mastercard"
    assert iban_valid("DE89 3704 0044 0532 0130 00") and not iban_valid("DE88 3704 0044 0532 0130 00")
    assert not iban_valid("DE89 3704 0044 0532 0130 0")  # one character short for Germany
    assert aba_routing_valid("021000021") and not aba_routing_valid("021000022")


def test_long_inputs_stay_fast() -> None:
    chunk = (
        "On 7 May 2023 I bought 3 tickets for $20 at 12 Main Street; my password is not here, "
        "call 555-123-4567, order 1234 5678 9012, version 1.2.3, the passcode for the door is 5521. "
    )
    text = chunk * 600  # ~110 kB
    started = time.perf_counter()
    result = redact_sensitive(text)
    assert time.perf_counter() - started < 2
    assert "5521" not in result.text and "555-123-4567" not in result.text
