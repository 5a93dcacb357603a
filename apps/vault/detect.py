"""Sensitive-material detection and redaction. Framework-free and deterministic.

Every input passes through ``redact_sensitive`` before an LLM or any other store sees it.
Each secret found — credentials, API keys, payment cards, bank accounts, government ids,
phone numbers, street addresses, email addresses — is replaced by a placeholder such as
``[vault:credential#1]`` and returned as a ``Detection`` whose caption describes it without
revealing it ("password for the bank website"). The same value gets the same placeholder
everywhere in the text, including repetitions no pattern would have caught on their own.

Detectors favour precision on ordinary text: counts, prices, dates and measurements are left
alone; card numbers must pass Luhn, IBANs mod-97, routing numbers the ABA checksum; words
after "password is" must look like a password rather than a description of one. Where two
detectors claim overlapping text, the earlier one in ``_DETECTORS`` wins.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum


class EntryType(StrEnum):
    CREDENTIAL = "credential"
    API_KEY = "api_key"
    PAYMENT_CARD = "payment_card"
    BANK_ACCOUNT = "bank_account"
    GOVERNMENT_ID = "government_id"
    PHONE_NUMBER = "phone_number"
    ADDRESS = "address"
    EMAIL = "email"


class Sensitivity(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"


@dataclass(frozen=True)
class Detection:
    entry_type: EntryType
    sensitivity: Sensitivity
    caption: str  # safe to show anywhere: it never contains the value
    value: str  # the secret, exactly as it appears at ``span`` in the input
    span: tuple[int, int]
    placeholder: str


@dataclass(frozen=True)
class Redaction:
    text: str  # the input with every detected value replaced by its placeholder
    detections: tuple[Detection, ...]  # in text order


@dataclass(frozen=True)
class _Finding:
    start: int
    end: int
    entry_type: EntryType
    sensitivity: Sensitivity
    caption: str


_PLACEHOLDER = re.compile(r"\[vault:[a-z_]+#\d+\]")
_TRAILING_PUNCTUATION = ".,;:)]}\"'’”"
_MIN_REPEAT_LENGTH = 4

# --- credentials: secrets introduced by a key word ---------------------------------------

_DETERMINERS = r"my|the|our|your|his|her|their"
_LOGIN_LABELS = r"password|passcode|passphrase|passwd|pass\ word|pwd|pw"
_PIN_LABELS = r"pin(?:\ code|\ number)?|security\ code|cvv2?|cvc2?"
_KEY_LABELS = (
    r"api[\ _-]?key|api[\ _-]?token|access[\ _-]?token|auth(?:entication)?[\ _-]?token|client[\ _-]?secret"
    r"|secret[\ _-]?access[\ _-]?key|secret[\ _-]?key|access[\ _-]?key(?:[\ _-]?id)?|private[\ _-]?key|secret|token"
)
_CREDENTIAL = re.compile(
    rf"""
    (?:(?<![A-Za-z])(?:{_DETERMINERS})\s+
       (?P<qualifier>(?:(?!(?:{_DETERMINERS}|is|was)\b)[A-Za-z][A-Za-z&'-]*\s+){{0,3}}?))?
    (?<![A-Za-z])(?P<label>(?P<password>{_LOGIN_LABELS})|(?P<pin>{_PIN_LABELS})|{_KEY_LABELS})(?![A-Za-z])
    (?:\s+(?P<preposition>for|to|on|at|of)\s+(?P<target>[A-Za-z][A-Za-z\ '&-]{{0,59}}?))?
    ["']?\s*(?P<separator>(?<![A-Za-z])(?:is|was)(?:\s+now)?(?=\s)|[:=]|->|=>)\s*
    (?P<value>"[^"\n]{{1,200}}"|'[^'\n]{{1,200}}'|“[^”\n]{{1,200}}”|\S{{1,200}})
    """,
    re.IGNORECASE | re.VERBOSE,
)
_PIN_WITHOUT_SEPARATOR = re.compile(r"(?<![A-Za-z])(?P<label>cvv2?|cvc2?|pin)\s+(?P<value>\d{3,8})(?![\d.,])", re.I)
_TOKEN_VALUE = re.compile(r"[A-Za-z0-9_\-+/=.~]+")
_PIN_VALUE = re.compile(r"\d{3,8}(?![\w])")
_SHORT_LOGIN_LABELS = frozenset({"pw", "pwd"})
_LABEL_NAMES = {
    "pw": "password",
    "pwd": "password",
    "passwd": "password",
    "pass word": "password",
    "pin": "PIN",
    "pin code": "PIN",
    "pin number": "PIN",
    "cvv": "card security code",
    "cvv2": "card security code",
    "cvc": "card security code",
    "cvc2": "card security code",
    "api key": "API key",
    "api token": "API token",
    "access key id": "access key ID",
}
# Words that describe a password rather than being one: "my password is too short".
_NOT_PASSWORDS = frozenset(
    """a an the my your his her our their this that it its what which same different not too very so still also
    just now then there here in on at for of to with below above attached wrong incorrect correct right invalid
    valid weak strong long short secure insecure safe unsafe blank empty private secret hidden unknown new old
    temporary easy hard simple complex good bad fine ok okay something anything nothing mine yours one
    probably definitely always never usually stolen broken written compromised""".split()
)


def _label_name(label: str) -> str:
    normalized = re.sub(r"[\s_-]+", " ", label.lower())
    return _LABEL_NAMES.get(normalized, normalized)


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """The value without surrounding quotes or sentence punctuation."""
    start, end = match.span("value")
    raw = match["value"]
    if raw[0] in "\"'“" and len(raw) > 2:
        return start + 1, end - 1
    stripped = raw.rstrip(_TRAILING_PUNCTUATION)
    return start, start + len(stripped)


def _plausible_password(value: str, *, quoted: bool, separator_is_word: bool) -> bool:
    if len(value) < 3 or set(value) <= {"*", "•"}:
        return False
    if quoted or not separator_is_word:
        return value.lower() not in _NOT_PASSWORDS
    if not value.isalpha():
        return True  # digits or symbols: "my password is hunter2"
    lowered = value.lower()
    return lowered not in _NOT_PASSWORDS and not lowered.endswith(("ed", "ing", "ly"))


def _plausible_token(value: str) -> bool:
    return len(value) >= 12 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _credential_caption(match: re.Match[str], label_name: str) -> str:
    qualifier = " ".join((match["qualifier"] or "").split())
    caption = f"{qualifier} {label_name}".strip()
    if match["target"]:
        caption += f" {match['preposition'].lower()} {' '.join(match['target'].split())}"
    return caption


def _keyword_credentials(text: str) -> Iterator[_Finding]:
    for match in _CREDENTIAL.finditer(text):
        label_name = _label_name(match["label"])
        start, end = _value_span(match)
        value = text[start:end]
        if not value or _PLACEHOLDER.match(match["value"]):
            continue
        quoted = match["value"][0] in "\"'“"
        separator_is_word = match["separator"][0].isalpha()
        if match["password"]:
            if match["label"].lower() in _SHORT_LOGIN_LABELS and separator_is_word:
                continue
            if not _plausible_password(value, quoted=quoted, separator_is_word=separator_is_word):
                continue
            entry_type = EntryType.CREDENTIAL
        elif match["pin"]:
            pin = _PIN_VALUE.match(value)
            if pin is None:
                continue
            end = start + pin.end()
            entry_type = EntryType.CREDENTIAL
        else:
            token = _TOKEN_VALUE.match(value)
            if token is None or not _plausible_token(token.group().rstrip(".")):
                continue
            end = start + len(token.group().rstrip("."))
            entry_type = EntryType.API_KEY
        yield _Finding(start, end, entry_type, Sensitivity.HIGH, _credential_caption(match, label_name))
    for match in _PIN_WITHOUT_SEPARATOR.finditer(text):
        start, end = match.span("value")
        yield _Finding(start, end, EntryType.CREDENTIAL, Sensitivity.HIGH, _label_name(match["label"]))


_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----", re.S
)
_URL_PASSWORD = re.compile(r"://[^\s/:@]+:(?P<value>[^\s/@]+)@")


def _private_keys(text: str) -> Iterator[_Finding]:
    for match in _PRIVATE_KEY.finditer(text):
        yield _Finding(match.start(), match.end(), EntryType.CREDENTIAL, Sensitivity.HIGH, "private key")


def _url_passwords(text: str) -> Iterator[_Finding]:
    for match in _URL_PASSWORD.finditer(text):
        start, end = match.span("value")
        yield _Finding(start, end, EntryType.CREDENTIAL, Sensitivity.HIGH, "password in a connection URL")


# --- API keys and tokens recognisable by their shape --------------------------------------

_API_KEY_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}"), "Anthropic API key"),
    (re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), "OpenAI API key"),
    (re.compile(r"(?<!\w)[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"), "Stripe secret key"),
    (re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"), "AWS access key ID"),
    (re.compile(r"(?<!\w)gh[pousr]_[A-Za-z0-9]{36,255}(?!\w)"), "GitHub token"),
    (re.compile(r"(?<!\w)github_pat_[A-Za-z0-9_]{22,255}"), "GitHub token"),
    (re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"), "Slack token"),
    (re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])"), "Google API key"),
    (re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "JSON web token"),
)
_BEARER = re.compile(r"(?<![A-Za-z])bearer\s+(?P<value>[A-Za-z0-9_\-+/=.~]{16,})", re.I)


def _shaped_api_keys(text: str) -> Iterator[_Finding]:
    for pattern, caption in _API_KEY_SHAPES:
        for match in pattern.finditer(text):
            yield _Finding(match.start(), match.end(), EntryType.API_KEY, Sensitivity.HIGH, caption)
    for match in _BEARER.finditer(text):
        start, end = match.span("value")
        yield _Finding(start, end, EntryType.API_KEY, Sensitivity.HIGH, "bearer token")


# --- payment cards and bank accounts ------------------------------------------------------

_CARD_CANDIDATE = re.compile(r"(?<![\d.,+-])\d(?:[ -]?\d){12,18}(?![\d-]|[.,]\d)")


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def card_brand(digits: str) -> str | None:
    """The card network for a number's issuer prefix and length, or None."""
    length, two, three, four = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4" and length in (13, 16, 19):
        return "Visa"
    if (51 <= two <= 55 or 2221 <= four <= 2720) and length == 16:
        return "Mastercard"
    if two in (34, 37) and length == 15:
        return "American Express"
    if (four == 6011 or two == 65 or 644 <= three <= 649) and length in (16, 19):
        return "Discover"
    if 3528 <= four <= 3589 and 16 <= length <= 19:
        return "JCB"
    if (two in (36, 38, 39) or 300 <= three <= 305) and length in (14, 16, 19):
        return "Diners Club"
    if two == 62 and 16 <= length <= 19:
        return "UnionPay"
    return None


def _payment_cards(text: str) -> Iterator[_Finding]:
    for match in _CARD_CANDIDATE.finditer(text):
        candidate = match.group()
        separators = set(re.sub(r"\d", "", candidate))
        groups = re.split(r"[ -]", candidate)
        if len(separators) > 1 or (separators and (len(groups) < 3 or any(not 3 <= len(g) <= 6 for g in groups))):
            continue
        digits = "".join(groups)
        brand = card_brand(digits)
        if brand is None or not luhn_valid(digits):
            continue
        caption = f"{brand} card ending in {digits[-4:]}"
        yield _Finding(match.start(), match.end(), EntryType.PAYMENT_CARD, Sensitivity.HIGH, caption)


_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
    "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip
_IBAN_CANDIDATE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])")


def iban_valid(candidate: str) -> bool:
    compact = candidate.replace(" ", "")
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def _ibans(text: str) -> Iterator[_Finding]:
    for match in _IBAN_CANDIDATE.finditer(text):
        if iban_valid(match.group()):
            caption = f"IBAN ({match.group()[:2]})"
            yield _Finding(match.start(), match.end(), EntryType.BANK_ACCOUNT, Sensitivity.HIGH, caption)


_BANK_NUMBER = re.compile(
    r"""
    (?<![A-Za-z])
    (?:(?P<account>(?:(?P<kind>bank|checking|chequing|savings|brokerage)\s+)?(?:account|acct)\.?
                   (?P<numbered>\s*(?:number|num|no\.?|\#))?)
      |(?P<routing>(?:routing|aba)(?:\s+(?:number|no\.?|\#))?)
      |(?P<sort_code>sort\s+code))
    \s*(?:is|was|:|=|\#)?\s*
    (?P<value>\d(?:[ -]?\d){5,19})(?![\d-]|[.,]\d)
    """,
    re.IGNORECASE | re.VERBOSE,
)


def aba_routing_valid(digits: str) -> bool:
    weights = (3, 7, 1) * 3
    return len(digits) == 9 and sum(int(d) * w for d, w in zip(digits, weights, strict=True)) % 10 == 0


def _bank_numbers(text: str) -> Iterator[_Finding]:
    for match in _BANK_NUMBER.finditer(text):
        start, end = match.span("value")
        digits = re.sub(r"\D", "", match["value"])
        if match["routing"]:
            if aba_routing_valid(digits):
                yield _Finding(start, end, EntryType.BANK_ACCOUNT, Sensitivity.MEDIUM, "bank routing number")
        elif match["sort_code"]:
            if len(digits) == 6:
                yield _Finding(start, end, EntryType.BANK_ACCOUNT, Sensitivity.MEDIUM, "bank sort code")
        elif len(digits) >= (6 if match["kind"] or match["numbered"] else 8):
            caption = f"{match['kind'].lower()} account number" if match["kind"] else "account number"
            yield _Finding(start, end, EntryType.BANK_ACCOUNT, Sensitivity.HIGH, caption)


# --- government ids ------------------------------------------------------------------------

_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}(?P<sep>[- ])(?!00)\d{2}(?P=sep)(?!0000)\d{4}(?![\d-])")
_GOVERNMENT_ID = re.compile(
    r"""
    (?<![A-Za-z])
    (?P<label>passport|driver'?s\s+licen[cs]e|driving\s+licen[cs]e|ssn|social\s+security
             |national\s+insurance|tax\s+id|itin|ein)
    (?:\s+(?:number|num|no\.?|\#|id))?
    \s*(?:is|was|:|=|\#)?\s*
    (?P<value>[A-Z0-9][A-Z0-9-]{4,14}[A-Z0-9])(?![A-Za-z0-9-])
    """,
    re.IGNORECASE | re.VERBOSE,
)
_GOVERNMENT_ID_CAPTIONS = {
    "passport": "passport number",
    "driver": "driver's license number",
    "driving": "driver's license number",
    "ssn": "US social security number",
    "social": "US social security number",
    "national": "national insurance number",
    "tax": "tax ID",
    "itin": "tax ID",
    "ein": "tax ID",
}


def _government_ids(text: str) -> Iterator[_Finding]:
    for match in _SSN.finditer(text):
        yield _Finding(
            match.start(), match.end(), EntryType.GOVERNMENT_ID, Sensitivity.HIGH, "US social security number"
        )
    for match in _GOVERNMENT_ID.finditer(text):
        if sum(c.isdigit() for c in match["value"]) < 5:
            continue
        caption = _GOVERNMENT_ID_CAPTIONS[re.split(r"[\s']", match["label"].lower())[0]]
        if caption == "US social security number" and len(re.sub(r"\D", "", match["value"])) != 9:
            continue
        start, end = match.span("value")
        yield _Finding(start, end, EntryType.GOVERNMENT_ID, Sensitivity.HIGH, caption)


# --- contact details -----------------------------------------------------------------------

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])"
)


def _emails(text: str) -> Iterator[_Finding]:
    for match in _EMAIL.finditer(text):
        yield _Finding(match.start(), match.end(), EntryType.EMAIL, Sensitivity.MEDIUM, "email address")


_PHONE_KEYWORD = re.compile(
    r"""
    (?<![A-Za-z])
    (?:(?:phone|cell|mobile|tel|telephone|fax|whatsapp|landline)(?:\s+(?:number|no\.?|\#))?\s*(?:is|was|:|=|\#)?
      |(?:call|text|reach|ring)(?:\s+(?:me|us|him|her|them))?\s+(?:at|on))
    \s*(?P<value>\+?\(?\d[\d\ ().-]{5,18}\d)(?![\d-]|[.,]\d)
    """,
    re.IGNORECASE | re.VERBOSE,
)
_PHONE_INTERNATIONAL = re.compile(r"(?<![\w+])\+\d[\d ().-]{6,22}\d(?![\d-]|[.,]\d)")
_PHONE_NANP = re.compile(
    r"(?<![\w+.-])(?:\+?1[ .-]?)?(?:\(\d{3}\)\s?\d{3}[ .-]|\d{3}(?P<sep>[ .-])\d{3}(?P=sep))\d{4}(?![\w-]|[.,]\d)"
)
_DATE_LIKE = re.compile(r"\d{1,4}([./-])\d{1,2}\1\d{1,4}")


def _phone_shaped(value: str, *, international: bool) -> bool:
    digits = re.sub(r"\D", "", value)
    if not (8 if international else 7) <= len(digits) <= 15 or _DATE_LIKE.fullmatch(value):
        return False
    if re.search(r"[ .-]{2}|\(\)", value):
        return False
    separators = re.sub(r"[\d+]", "", value)
    if not separators:
        return True  # E.164 written compactly: "+4915112345678"
    if separators == ".":
        return False  # a decimal number: "+3.14159265"
    return all(len(group) <= 8 for group in re.split(r"\D+", value) if group)


def _phone_numbers(text: str) -> Iterator[_Finding]:
    for match in _PHONE_KEYWORD.finditer(text):
        if _phone_shaped(match["value"], international=False):
            start, end = match.span("value")
            yield _Finding(start, end, EntryType.PHONE_NUMBER, Sensitivity.MEDIUM, "phone number")
    for match in _PHONE_INTERNATIONAL.finditer(text):
        if _phone_shaped(match.group(), international=True):
            yield _Finding(match.start(), match.end(), EntryType.PHONE_NUMBER, Sensitivity.MEDIUM, "phone number")
    for match in _PHONE_NANP.finditer(text):
        yield _Finding(match.start(), match.end(), EntryType.PHONE_NUMBER, Sensitivity.MEDIUM, "phone number")


_STREET_SUFFIXES = (
    "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Terrace|Ter|Way|Circle|Cir"
    "|Parkway|Pkwy|Highway|Hwy|Square|Sq|Trail|Trl|Crescent|Close|Alley|Plaza"
)
# ", City Name, ST 12345": only short abbreviations ("St.", "Mt.") may end in a dot, so a
# sentence that ends after the city does not run into the next one.
_LOCALITY_WORD = r"(?:[A-Z][a-z]{0,2}\.|[A-Z][A-Za-z'-]*)"
_LOCALITY = rf"(?:,\s*{_LOCALITY_WORD}(?:\s+{_LOCALITY_WORD}){{0,3}}(?:,\s*[A-Z]{{2}})?(?:\s+\d{{5}}(?:-\d{{4}})?)?)?"
_STREET_ADDRESS = re.compile(
    rf"""
    (?<![\w$€£.,:/-])(?P<number>\d{{1,6}}[A-Za-z]?(?:-\d{{1,6}})?)\s+
    (?P<name>(?:[A-Za-z0-9][\w'.-]*\s+){{1,4}}?)
    (?i:{_STREET_SUFFIXES})\b\.?
    (?:,?\s+(?i:apt|apartment|suite|ste|unit|floor|fl)\.?\s*\#?[A-Za-z0-9-]{{1,6}}|,?\s+\#[A-Za-z0-9-]{{1,6}})?
    {_LOCALITY}
    """,
    re.VERBOSE,
)
_PO_BOX = re.compile(r"(?<![A-Za-z])(?i:p\.?\s?o\.?\s+box)\s+\d{1,8}" + _LOCALITY)
_ADDRESS_CUE = re.compile(
    r"(?i:\b(?:live|lives|living|lived|address|located|moved|move|reside|resides|ship|deliver|send|mail)\b)[^.\n]{0,25}$"
)
_STREET_NAME_WORD = re.compile(r"(?:[A-Z][\w'.-]*|\d+(?:st|nd|rd|th)|[NSEW]\.?)")
_NOT_STREET_WORDS = frozenset(
    "a an the of to in on at and or my by for with from down up near past off along across into onto "
    "minutes miles hours blocks steps away".split()
)


def _street_name_plausible(name: str, *, cued: bool) -> bool:
    words = name.split()
    if any(word.lower() in _NOT_STREET_WORDS for word in words):
        return False
    return cued or all(_STREET_NAME_WORD.fullmatch(word) for word in words)


def _addresses(text: str) -> Iterator[_Finding]:
    for match in _STREET_ADDRESS.finditer(text):
        cued = _ADDRESS_CUE.search(text, max(0, match.start() - 40), match.start()) is not None
        if _street_name_plausible(match["name"], cued=cued):
            yield _Finding(match.start(), match.end(), EntryType.ADDRESS, Sensitivity.MEDIUM, "street address")
    for match in _PO_BOX.finditer(text):
        yield _Finding(match.start(), match.end(), EntryType.ADDRESS, Sensitivity.MEDIUM, "PO box address")


# --- resolution and redaction ---------------------------------------------------------------

_DETECTORS: tuple[Callable[[str], Iterator[_Finding]], ...] = (
    _private_keys,
    _url_passwords,
    _keyword_credentials,
    _shaped_api_keys,
    _payment_cards,
    _ibans,
    _government_ids,
    _bank_numbers,
    _emails,
    _phone_numbers,
    _addresses,
)


class _Spans:
    """Accepted, non-overlapping spans in start order."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add_if_free(self, start: int, end: int) -> bool:
        index = bisect.bisect_left(self.starts, start)
        if index > 0 and self.ends[index - 1] > start:
            return False
        if index < len(self.starts) and self.starts[index] < end:
            return False
        self.starts.insert(index, start)
        self.ends.insert(index, end)
        return True


def _resolve(text: str) -> list[_Finding]:
    spans = _Spans()
    accepted: list[_Finding] = []
    for detector in _DETECTORS:
        for finding in sorted(detector(text), key=lambda f: (f.start, -f.end)):
            if finding.end > finding.start and spans.add_if_free(finding.start, finding.end):
                accepted.append(finding)
    # A value found once is redacted wherever else it appears: "my PIN is 4821 ... 4821".
    first_by_value: dict[str, _Finding] = {}
    for finding in accepted:
        value = text[finding.start : finding.end]
        if len(value) >= _MIN_REPEAT_LENGTH:
            first_by_value.setdefault(value, finding)
    if first_by_value:
        alternatives = "|".join(re.escape(v) for v in sorted(first_by_value, key=len, reverse=True))
        for repeat in re.finditer(rf"(?<!\w)(?:{alternatives})(?!\w)", text):
            if spans.add_if_free(repeat.start(), repeat.end()):
                finding = first_by_value[repeat.group()]
                accepted.append(
                    _Finding(repeat.start(), repeat.end(), finding.entry_type, finding.sensitivity, finding.caption)
                )
    return sorted(accepted, key=lambda f: f.start)


def redact_sensitive(text: str) -> Redaction:
    """Find the sensitive values in ``text`` and replace each with its vault placeholder."""
    placeholders: dict[tuple[EntryType, str], str] = {}
    counters: dict[EntryType, int] = {}
    detections: list[Detection] = []
    pieces: list[str] = []
    cursor = 0
    for finding in _resolve(text):
        value = text[finding.start : finding.end]
        placeholder = placeholders.get((finding.entry_type, value))
        if placeholder is None:
            counters[finding.entry_type] = counters.get(finding.entry_type, 0) + 1
            placeholder = f"[vault:{finding.entry_type}#{counters[finding.entry_type]}]"
            placeholders[(finding.entry_type, value)] = placeholder
        detections.append(
            Detection(
                entry_type=finding.entry_type,
                sensitivity=finding.sensitivity,
                caption=finding.caption,
                value=value,
                span=(finding.start, finding.end),
                placeholder=placeholder,
            )
        )
        pieces.append(text[cursor : finding.start])
        pieces.append(placeholder)
        cursor = finding.end
    pieces.append(text[cursor:])
    return Redaction(text="".join(pieces), detections=tuple(detections))
