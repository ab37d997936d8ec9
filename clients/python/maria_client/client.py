"""`Maria`: the engine's REST API (README, "Connect your RAG") over one httpx client.

Agents upload documents, search for passages, submit answers (claims with citations, or a
plain answer with its sources) and wait for the verdict; people with a personal token claim,
approve and reject; auditors export the trail. Every refusal is a typed `MariaError`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any

import httpx

from maria_client.errors import MariaError, TransportError, WaitTimeout, error_from
from maria_client.models import ClaimVerdict, Decision, DecisionRow, Passage, UploadedDocument
from maria_client.webhooks import WebhookEvent, WebhookInbox

API = "/api/v1"
# Worth another try with the same Idempotency-Key: the engine did not decide anything yet
# (rate limit, a request with the key still running, a proxy or a restart in between).
RETRIED_STATUSES = frozenset({409, 429, 502, 503, 504})
MAX_RETRY_WAIT = 30.0

Source = Passage | Mapping[str, Any]
# A claim verdict to send: a ClaimVerdict, or its JSON as a mapping.
Verdict = ClaimVerdict | Mapping[str, Any]


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date | datetime) else value


def _verdict(verdict: Verdict) -> dict[str, Any]:
    if isinstance(verdict, ClaimVerdict):
        return verdict.as_json()
    return dict(verdict)


def _source(source: Source) -> dict[str, Any]:
    if isinstance(source, Passage):
        return source.citation()
    return {key: value for key, value in source.items() if value is not None}


class Maria:
    """A client of one engine, as one token: an agent's, or a person's personal token.

    `Maria("http://127.0.0.1:8000", token)`; pass `http=` to bring your own `httpx.Client`
    (proxies, certificates, a test transport). Use it as a context manager, or `close()` it.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        retries: int = 2,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self._own_http = http is None
        self._http = http or httpx.Client(timeout=timeout)
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "User-Agent": "maria-client/0.1",
        }

    # --- plumbing -------------------------------------------------------------------------

    def close(self) -> None:
        if self._own_http:
            self._http.close()

    def __enter__(self) -> Maria:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        retry: bool = False,
    ) -> Any:
        """Send one request and return its JSON; with `retry`, answers that decided nothing
        (RETRIED_STATUSES, no answer at all) are tried again with backoff, so only requests
        that are safe to repeat (reads, keyed submissions) pass it."""
        attempts = 1 + (self.retries if retry else 0)
        query = {k: _plain(v) for k, v in (params or {}).items() if v is not None}
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._http.request(
                    method,
                    self.base_url + path,
                    json=body,
                    params=query,
                    headers={**self._headers, **(headers or {})},
                )
            except httpx.TransportError as error:
                if last:
                    raise TransportError(str(error) or type(error).__name__) from error
                time.sleep(min(0.5 * 2**attempt, MAX_RETRY_WAIT))
                continue
            if response.is_success:
                return response.json()
            failure = error_from(response)
            if last or response.status_code not in RETRIED_STATUSES:
                raise failure
            time.sleep(self._retry_wait(response, attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _retry_wait(response: httpx.Response, attempt: int) -> float:
        try:
            asked = float(response.headers.get("Retry-After", ""))
        except ValueError:
            asked = 0.5 * 2**attempt
        return min(max(asked, 0.0), MAX_RETRY_WAIT)

    # --- documents and search -------------------------------------------------------------

    def upload_document(
        self,
        text: str,
        *,
        zone: str,
        kind: str = "policy",
        status: str = "approved",
        title: str | None = None,
        key: str | None = None,
        effective_date: date | str | None = None,
        supersedes: int | None = None,
        format: str | None = None,
    ) -> UploadedDocument:
        """Store a document version in `zone` (agents into their own zone, zone admins into
        theirs); the same text again answers with the version already there."""
        body = {
            "text": text,
            "zone": zone,
            "kind": kind,
            "status": status,
            "title": title,
            "key": key,
            "effective_date": _plain(effective_date),
            "supersedes": supersedes,
            "format": format,
        }
        sent = {name: value for name, value in body.items() if value is not None}
        return UploadedDocument.from_json(self._request("POST", f"{API}/documents/", body=sent))

    def search(
        self,
        q: str,
        *,
        zone: str | None = None,
        k: int = 15,
        include_superseded: bool = False,
    ) -> list[Passage]:
        """Hybrid retrieval as the engine's own `ask` uses it, within the token's zone (or
        the person's scopes): passages ready to cite."""
        params = {
            "q": q,
            "zone": zone,
            "k": k,
            "include_superseded": 1 if include_superseded else None,
        }
        body = self._request("GET", f"{API}/search/", params=params, retry=True)
        return [Passage.from_json(row) for row in body["passages"]]

    # --- decisions ------------------------------------------------------------------------

    def submit(
        self,
        *,
        question: str,
        answer: str,
        zone: str,
        agent: str,
        claims: Sequence[Mapping[str, Any]] | None = None,
        sources: Sequence[Source] | None = None,
        idempotency_key: str | None = None,
    ) -> Decision:
        """Submit an answer as a proposed decision: with `claims` (each `{text, citations}`),
        or plain with `sources` (passages or `{document, version?, paragraph}`) that inline
        markers such as `[1]` point into, 1-based. An Idempotency-Key is made when none is
        given and kept across the client's retries, so a retry never decides twice."""
        body: dict[str, Any] = {
            "question": question,
            "answer": answer,
            "zone": zone,
            "agent": agent,
        }
        if claims is not None:
            body["claims"] = [dict(claim) for claim in claims]
        if sources is not None:
            body["sources"] = [_source(source) for source in sources]
        key = idempotency_key or f"maria-client-{uuid.uuid4().hex}"
        made = self._request(
            "POST", f"{API}/decisions/", body=body, headers={"Idempotency-Key": key}, retry=True
        )
        return Decision.from_json(made)

    def decision(self, decision_id: int) -> Decision:
        """The decision with its report and trail events."""
        return Decision.from_json(
            self._request("GET", f"{API}/decisions/{decision_id}/", retry=True)
        )

    def wait(
        self,
        decision_id: int,
        timeout: float = 60.0,
        *,
        webhook: WebhookInbox | WebhookEvent | None = None,
        first_delay: float = 0.25,
        max_delay: float = 5.0,
    ) -> Decision:
        """The decision once it is final (completed or failed), waiting up to `timeout` s.

        With `webhook` (an inbox your webhook receiver feeds, or an event it verified) the
        outcome's webhook says when to look; without, the decision is polled with exponential
        backoff from `first_delay` to `max_delay` seconds. Raises `WaitTimeout`, carrying the
        last state seen, if it is still open then (an answer waiting for a reviewer can wait
        for hours: its `due_at` says until when)."""
        deadline = time.monotonic() + timeout
        if isinstance(webhook, WebhookInbox):
            webhook.wait_for(decision_id, max(deadline - time.monotonic(), 0.0))
        elif isinstance(webhook, WebhookEvent) and webhook.decision_id not in (None, decision_id):
            raise ValueError(f"the webhook event is about decision {webhook.decision_id}")
        # The outcome's webhook can arrive a moment before the engine records that it was
        # delivered (executed -> completed), so after one the decision is still polled.
        return self._poll(decision_id, deadline, lambda d: d.is_final, first_delay, max_delay)

    def graded(self, decision_id: int, timeout: float = 30.0) -> Decision:
        """The decision once its gate is known (validated: a worker may take a moment),
        polled with backoff; `WaitTimeout` if it is still ungraded after `timeout` s."""
        deadline = time.monotonic() + timeout
        return self._poll(
            decision_id, deadline, lambda d: d.gate is not None or d.is_final, 0.1, 2.0
        )

    def _poll(
        self,
        decision_id: int,
        deadline: float,
        done: Callable[[Decision], bool],
        delay: float,
        max_delay: float,
    ) -> Decision:
        """GET the decision until `done(decision)`, sleeping `delay` seconds, doubling up to
        `max_delay`, between looks; `WaitTimeout` at the monotonic `deadline`."""
        started = time.monotonic()
        while True:
            decision = self.decision(decision_id)
            if done(decision):
                return decision
            left = deadline - time.monotonic()
            if left <= 0:
                raise WaitTimeout(
                    f"decision {decision_id} is still {decision.state} after "
                    f"{time.monotonic() - started:.0f} s",
                    code="wait_timeout",
                    details=decision.raw,
                )
            time.sleep(min(delay, left))
            delay = min(delay * 2, max_delay)

    # --- reviewers (personal tokens) --------------------------------------------------------

    def _act(self, decision_id: int, action: str, body: dict[str, Any] | None) -> DecisionRow:
        row = self._request("POST", f"{API}/decisions/{decision_id}/{action}/", body=body)
        return DecisionRow.from_json(row)

    def claim(self, decision_id: int) -> DecisionRow:
        """Take a decision awaiting review, so no other reviewer acts on it meanwhile."""
        return self._act(decision_id, "claim", None)

    def release(self, decision_id: int) -> DecisionRow:
        """Give a claimed decision back to the queue."""
        return self._act(decision_id, "release", None)

    def approve(
        self,
        decision_id: int,
        reason: str = "",
        *,
        claims: Sequence[Verdict] | None = None,
        replacement: str | None = None,
    ) -> DecisionRow:
        """Approve (four eyes: never your own answer); enough approvals release it. `claims`:
        your verdict on the claims you name, e.g. `[ClaimVerdict(0, True)]` (only those are
        recorded). `replacement`: an answer you write to deliver instead of the agent's;
        a refusal (mode "refusal") is approved only with one (ValidationError, field
        `replacement`, without)."""
        body: dict[str, Any] = {"reason": reason}
        if claims is not None:
            body["claims"] = [_verdict(c) for c in claims]
        if replacement is not None:
            body["replacement"] = replacement
        return self._act(decision_id, "approve", body)

    def reject(self, decision_id: int, reason: str, *, claims: Sequence[Verdict]) -> DecisionRow:
        """Reject with a reason (required) and your verdict per claim, at least one of them
        unsupported: `claims=[ClaimVerdict(0, False, "names the line manager")]`. The agent's
        webhook hears it."""
        return self._act(
            decision_id, "reject", {"reason": reason, "claims": [_verdict(c) for c in claims]}
        )

    def reviews(
        self, *, zone: str | None = None, since: datetime | date | str | None = None
    ) -> Iterator[dict[str, Any]]:
        """The reviews export (zone admins, auditors): one reviewed claim a line, as it
        streams; write them to a file for `manage.py fit_verifier --corpus FILE`."""
        query = {k: _plain(v) for k, v in {"zone": zone, "since": since}.items() if v is not None}
        headers = {**self._headers, "Accept": "application/x-ndjson"}
        try:
            with self._http.stream(
                "GET", f"{self.base_url}{API}/reviews/export/", params=query, headers=headers
            ) as response:
                if not response.is_success:
                    response.read()
                    raise error_from(response)
                for line in response.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.TransportError as error:
            raise TransportError(str(error) or type(error).__name__) from error

    # --- the trail (auditors) ---------------------------------------------------------------

    def trail_lines(
        self,
        *,
        zone: str | None = None,
        since: datetime | date | str | None = None,
        include_evidence: bool = False,
    ) -> Iterator[str]:
        """The trail export as it streams, line by line, exactly as sent: write them to a
        file for `manage.py verify_trail --file` (a header, the checkpoints, every event, and
        with `include_evidence` the bundles, reports and paragraphs the events name)."""
        params = {
            "zone": zone,
            "since": _plain(since),
            "include": "evidence" if include_evidence else None,
        }
        query = {k: v for k, v in params.items() if v is not None}
        headers = {**self._headers, "Accept": "application/x-ndjson"}
        try:
            with self._http.stream(
                "GET", f"{self.base_url}{API}/trail/", params=query, headers=headers
            ) as response:
                if not response.is_success:
                    response.read()
                    raise error_from(response)
                for line in response.iter_lines():
                    if line.strip():
                        yield line
        except httpx.TransportError as error:
            raise TransportError(str(error) or type(error).__name__) from error

    def trail(
        self,
        *,
        zone: str | None = None,
        since: datetime | date | str | None = None,
        include_evidence: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """`trail_lines`, each read as its JSON object (`type`: trail.export, trail.checkpoint,
        trail.event, ..., trail.end)."""
        for line in self.trail_lines(zone=zone, since=since, include_evidence=include_evidence):
            yield json.loads(line)


__all__ = ["Maria", "MariaError"]
