"""The console in a real browser: Debian's Chromium driven by Playwright, against gunicorn
serving the test settings, with a real Celery worker running erasure, indexing and webhooks.

Screenshots land in var/test-artifacts/console/.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
import requests
from django.core.management import call_command
from playwright.sync_api import Browser, Page, expect, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from apps.erasure.receipt import receipt_verify
from apps.erasure.selectors import receipt_public_key
from apps.graph import store
from apps.tenancy.models import ApiKey, Membership
from apps.tenancy.scope import organization_scope
from tests.console.conftest import PASSWORD, make_staff
from tests.console.support import World, populate
from tests.erasure.support import run_erasure
from tests.factories import Tenant, make_tenant
from tests.processes import ROOT, celery_worker, purge_queues, wait_for
from tests.webhooks.support import Receiver

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "var" / "test-artifacts" / "console"

pytestmark = pytest.mark.slow  # gunicorn, a Celery worker and Chromium (.ci/run installs it)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, port: int, process: subprocess.Popen[bytes]) -> None:
        self.port, self.process = port, process

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def up(self) -> bool:
        assert self.process.poll() is None, "gunicorn exited; see var/test-console-gunicorn.log"
        try:
            return requests.get(self.url("/healthz"), timeout=5).status_code == 200
        except requests.RequestException:
            return False


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: pytest.FixtureRequest) -> Iterator[Server]:
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        call_command("collectstatic", "--noinput", verbosity=0)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(DJANGO_SETTINGS_MODULE="mirix_saas.settings.test", MIRIX_TEST_KEEP_ENV="1")
    log = open(ROOT / "var" / "test-console-gunicorn.log", "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "mirix_saas.wsgi:application", "-b", f"127.0.0.1:{port}", "-w", "2"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = Server(port, process)
    try:
        wait_for(server.up, timeout=120, interval=0.5)
        yield server
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # Playwright's sync API runs an event loop in this thread; the test's own database calls
    # stay synchronous, so Django's guard against ORM calls from async code does not apply.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def worker() -> Iterator[None]:
    purge_queues()
    with celery_worker(name="console"):
        yield


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    try:
        yield server
    finally:
        server.close()


def _shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _sign_in(page: Page, server: Server, username: str, target: str = "/console/") -> None:
    page.goto(server.url(target))
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button:has-text('Sign in')")


def _reload(page: Page) -> bool:
    """Reload once the current navigation has settled; a reload that still races one is
    reported as not done, so the caller's poll simply tries again."""
    page.wait_for_load_state("load")
    try:
        page.reload()
    except PlaywrightError:
        return False
    return True


def _reload_until(page: Page, selector: str, text: str, *, timeout: float = 90) -> None:
    def shown() -> bool:
        return _reload(page) and text in page.inner_text(selector)

    wait_for(shown, timeout=timeout, interval=1.0)


def test_a_staff_member_works_through_the_console(
    server: Server, browser: Browser, worker: None, receiver: Receiver
) -> None:
    tenant = make_tenant("acme")
    world: World = populate(tenant, endpoint_url=receiver.url())
    staff = make_staff(tenant, role=Membership.Role.OWNER)
    page = browser.new_page()

    # Sign in; the organization list shows the one organization of this staff member.
    page.goto(server.url("/console/login/"))
    _shot(page, "01-login")
    _sign_in(page, server, staff.user.username)
    expect(page.get_by_role("heading", name="Organizations")).to_be_visible()
    _shot(page, "02-organizations")
    page.click("text=Acme")
    expect(page.locator("#organization-facts")).to_contain_text(str(tenant.id))

    # Create a key: shown once, and it works against the API; then revoke it.
    page.click("nav.sections >> text=API keys")
    page.fill("#id_name", "browser key")
    page.check("input[name=scopes][value='memories:read']")
    page.click("button:has-text('Create key')")
    secret = page.inner_text("#issued-secret").strip()
    _shot(page, "03-key-created")
    api = requests.get(server.url("/v1/subjects"), headers={"Authorization": f"Bearer {secret}"}, timeout=10)
    assert api.status_code == 200 and "maya" in api.text
    page.goto(page.url)  # a plain reload of the list: the key is not shown again
    assert secret not in page.content()
    row = page.locator("tr", has_text="browser key")
    row.locator("button:has-text('Revoke')").click()
    expect(page.locator(".notice")).to_contain_text("is revoked")
    expect(page.locator("tr", has_text="browser key")).to_contain_text("revoked")
    _shot(page, "04-key-revoked")
    api = requests.get(server.url("/v1/subjects"), headers={"Authorization": f"Bearer {secret}"}, timeout=10)
    assert api.status_code == 401

    # Browse the subject's memory, its graph, and one frame with the rows it cites.
    page.click("nav.sections >> text=Subjects")
    page.click("a:has-text('maya')")
    expect(page.locator("#memory-rows tbody tr").first).to_contain_text("indexed")
    assert "Bay to Breakers" in page.inner_text("#memory-rows")
    _shot(page, "05-memory-episodic")
    page.click(".tabs >> text=semantic")
    assert page.locator("#memory-rows tbody tr").count() >= 1
    page.click(".tabs >> text=Graph")
    page.locator("#frames tbody tr a").first.wait_for()
    _shot(page, "06-graph")
    page.click(f"#frames a:has-text('{world.frame['frame_id']}')")
    for row_id in world.frame["citations"]:
        expect(page.locator(f"#row-{row_id}")).to_be_visible()
    _shot(page, "07-frame-citations")

    # The audit chain verifies.
    page.click("nav.sections >> text=Audit log")
    expect(page.locator("#audit-entries")).to_contain_text("console.api_key.revoke")
    page.click("text=Verify the hash chain")
    expect(page.locator("#chain-status")).to_contain_text("intact")
    _shot(page, "08-audit-chain")

    # Webhook deliveries with their attempts; a ping from the console arrives too.
    page.click("nav.sections >> text=Webhooks")
    page.click(f"a:has-text('{receiver.url()}')")
    _reload_until(page, "#deliveries", "succeeded")
    with page.expect_navigation():  # the form posts, then redirects back to the endpoint
        page.click("button:has-text('Send ping')")
    wait_for(lambda: len(receiver.requests) >= 2, timeout=60)
    pings = page.locator("tr.delivery[data-status=succeeded]", has_text="webhook.ping")
    wait_for(lambda: _reload(page) and pings.count() == 2, timeout=60, interval=1.0)
    expect(pings.first.locator(".attempt")).to_contain_text("200")
    _shot(page, "09-webhook-deliveries")

    # Erase the subject and read the receipt once the job has run.
    page.click("nav.sections >> text=Subjects")
    page.click("a:has-text('maya') >> nth=0")
    page.click(".tabs >> text=Erasure")
    page.fill("#id_confirm", "maya")
    page.click("button:has-text('Erase subject')")
    expect(page.get_by_role("heading", name=re.compile("^Erasure"))).to_be_visible()
    _reload_until(page, "#erasure-status", "completed")
    expect(page.locator("#receipt-hash")).to_contain_text("hash verifies")
    episodic = page.locator("#erasure-counts tr").filter(has=page.locator("code", has_text=re.compile("^episodic$")))
    assert int(episodic.locator("td").nth(1).inner_text()) > 0
    _shot(page, "10-erasure-receipt")
    page.click("nav.sections >> text=Subjects")
    assert "maya" not in page.inner_text("table").split()
    page.close()


def test_staff_of_another_organization_see_not_found(server: Server, browser: Browser, tenant: Tenant) -> None:
    outsider_tenant = make_tenant()
    outsider = make_staff(outsider_tenant)
    page = browser.new_page()
    target = f"/console/orgs/{tenant.id}/keys/"
    _sign_in(page, server, outsider.user.username, target)
    expect(page.get_by_role("heading", name=re.compile("Not found"))).to_be_visible()
    assert tenant.organization.name not in page.content()
    _shot(page, "11-other-organization-404")
    page.close()


def test_usage_audit_names_receipt_download_and_graph_picture(server: Server, browser: Browser) -> None:
    tenant = make_tenant("usage-co")
    world: World = populate(tenant)
    run_erasure(world.erasure_request_id)
    with organization_scope(tenant.id):
        key_name = ApiKey.objects.get(id=world.api_key_id).name
        frames = store.frame_page(organization_id=tenant.id, subject_id=world.subject.id, after="")
    staff = make_staff(tenant, role=Membership.Role.VIEWER)
    page = browser.new_page(accept_downloads=True)
    _sign_in(page, server, staff.user.username, f"/console/orgs/{tenant.id}/")

    # The overview: 30 bars, today's as tall as the tallest, and the key by name.
    bars = page.locator("#usage-chart rect.bar")
    expect(bars).to_have_count(30)
    today = bars.nth(29)
    assert int(today.get_attribute("data-value") or 0) > 0
    assert float(today.get_attribute("height") or 0) > 0
    expect(page.locator("#usage-keys")).to_contain_text(key_name)
    _shot(page, "12-usage-overview")

    # The audit log: the key's name and the subject's external id beside their ids.
    page.click("nav.sections >> text=Audit log")
    write = page.locator("#audit-entries tr", has_text="memory.write").first
    expect(write.locator("td.actor")).to_contain_text(key_name)
    expect(write.locator("td.actor")).to_contain_text(f"api_key:{world.api_key_id}")
    expect(write.locator("td.subject")).to_contain_text(world.subject.external_id)
    expect(write.locator("td.subject")).to_contain_text(str(world.subject.id))
    _shot(page, "13-audit-names")

    # The receipt downloads as JSON whose signature verifies with the key the page shows.
    page.goto(server.url(f"/console/orgs/{tenant.id}/erasure/{world.erasure_request_id}/"))
    shown_key = page.inner_text("#receipt-public-key").strip()
    assert shown_key == receipt_public_key()
    with page.expect_download() as info:
        page.click("#receipt-download")
    download = info.value
    assert download.suggested_filename == f"erasure-receipt-{world.erasure_request_id}.json"
    with open(download.path(), encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["receipt"]["erasure_request_id"] == str(world.erasure_request_id)
    assert receipt_verify(document, public_key=shown_key)
    _shot(page, "14-receipt")

    # The graph page draws a node per frame and the anchors they join.
    page.goto(server.url(f"/console/orgs/{tenant.id}/subjects/{world.subject.id}/graph/"))
    picture = page.locator("#graph-picture")
    expect(picture).to_be_visible()
    expect(picture.locator("g[data-kind=frame]")).to_have_count(min(len(frames), 40))
    assert picture.locator("g[data-kind=anchor]").count() > 0
    first = world.frame
    expect(picture.locator(f'g[data-kind=frame][data-ref="{first["frame_id"]}"]')).to_have_count(1)
    for row_id in first["citations"]:
        expect(picture.locator(f'line.cites[data-source="{first["frame_id"]}"][data-target="{row_id}"]')).to_have_count(
            1
        )
    _shot(page, "15-graph-picture")
    page.close()
