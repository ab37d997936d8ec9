"""The web pages of reviewers and zone admins: the queue, the decision page, the zone tree.

Thin: reads come from `gates.selectors`, shaped for the page by `gates.presenters`; writes go
through the services of `decisions` and `coordinates`, which check again who may act. Every
page checks the user's scope on the server: a decision or zone outside it is a 404, a page
for a role the user lacks a 403.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from coordinates import policy as zone_policy
from coordinates.coordinate import Coordinate
from coordinates.models import RoleAssignment
from coordinates.selectors import effective_policy, policy_history
from coordinates.services import policy_update, role_grant, role_revoke
from decisions import rereview, services
from decisions.delivery import delivery_of
from decisions.escalation import escalation_explained
from decisions.models import ClaimVerdict, Decision, Gate, State
from decisions.representation import override_progress
from gates import advice_views, conflicts, policy_help, presenters, selectors
from gates import services as gate_services
from gates.forms import GrantForm, PolicyForm
from gates.models import SavedFilter
from graph.services import NOTE_LIMIT, graph_risk_resolve
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound

View = Callable[..., HttpResponse | StreamingHttpResponse]


def role_required(roles: Iterable[str]) -> Callable[[View], View]:
    """Logged in and holding one of `roles` somewhere; otherwise 403."""
    wanted = tuple(roles)

    def decorate(view: View) -> View:
        @login_required
        @wraps(view)
        def wrapper(
            request: HttpRequest, *args: Any, **kwargs: Any
        ) -> HttpResponse | StreamingHttpResponse:
            scopes = selectors.scopes_of(request.user, wanted)
            if scopes is not None and not scopes:
                raise Forbidden(_("this page needs a role you do not hold"))
            return view(request, *args, **kwargs)

        return wrapper

    return decorate


# --- reviewer queue ------------------------------------------------------------------------


def _queue_context(request: HttpRequest) -> dict[str, Any]:
    filters = selectors.QueueFilters.from_query(request.GET)
    now = timezone.now()
    rows = presenters.queue_rows(
        selectors.queue_values(request.user, filters), viewer_id=request.user.pk, now=now
    )
    total = len(rows)
    if total >= selectors.QUEUE_LIMIT:  # a full page: there may be more behind it
        total = selectors.queue_total(request.user, filters)
    return {
        "filters": filters,
        "filter_query": urlencode(filters.as_query()),
        "rows": rows,
        "total": total,
        "shown": len(rows),
        "now": timezone.now(),
    }


def _risk_flags(user: Any) -> list[presenters.RiskFlagRow]:
    flags = selectors.risk_flags_for_review(user)
    return presenters.risk_flag_rows(flags, selectors.flagged_nodes(flags))


@require_GET
@role_required(selectors.REVIEW_ROLES)
def queue(request: HttpRequest) -> HttpResponse:
    context = _queue_context(request)
    context.update(
        zones=selectors.queue_zones(request.user),
        gates=Gate.choices,
        states=[
            ("", _("all waiting")),
            ("unclaimed", _("unclaimed")),
            ("claimed", _("claimed")),
            ("mine", _("claimed by me")),
            ("assigned", _("assigned to me")),
            ("escalated", _("escalated")),
            ("to_me", _("escalated to me")),
        ],
        saved=SavedFilter.objects.filter(user__pk=int(request.user.pk or 0)),
        risk_flags=_risk_flags(request.user),
        note_limit=NOTE_LIMIT,
        reason_limit=services.REASON_LIMIT,
        day=selectors.reviewer_day(
            request.user, waiting=selectors.queue_total(request.user, selectors.QueueFilters())
        ),
        sorts=[
            ("", _("escalated to me, then due first")),
            ("oldest", _("oldest first")),
            ("newest", _("newest first")),
            ("sufficiency", _("weakest sufficiency first")),
            ("zone", _("by zone")),
        ],
        # who the waiting decisions are assigned to, the viewer, and whoever a shared link names
        assignees=sorted(
            {*selectors.queue_assignees(request.user), request.user.get_username()}
            | ({context["filters"].assignee} - {"", "-"})
        ),
    )
    # Answers already given whose cited text has changed since: work of this queue too; and,
    # counted apart, answers still waiting whose cited text changed.
    context["rereviews_open"], context["rereviews_waiting"] = rereview.rereviews_open_counts(
        request.user  # type: ignore[arg-type]
    )
    return render(request, "queue/queue.html", context)


def _back_to_queue(request: HttpRequest) -> HttpResponse:
    """The queue as the reviewer was looking at it: the filters the bulk form carried along,
    read as the queue reads its address (anything else is dropped)."""
    filters = selectors.QueueFilters.from_query(QueryDict(request.POST.get("filters", "")))
    query = urlencode(filters.as_query())
    return redirect(f"{reverse('queue')}?{query}" if query else reverse("queue"))


@require_POST
@role_required(selectors.REVIEW_ROLES)
def queue_bulk(request: HttpRequest) -> HttpResponse:
    """Release, assign, approve or reject the decisions ticked in the queue; says, for each,
    done or why not."""
    ids = [int(v) for v in request.POST.getlist("decisions") if v.isdigit()][:200]
    action = request.POST.get("action", "")
    if not ids:
        # Apply with nothing ticked once said nothing at all: say what is missing.
        messages.error(request, _("Tick the decisions to apply this to: none was ticked."))
        return _back_to_queue(request)
    try:
        outcome = services.decisions_bulk(
            decision_ids=ids,
            user=request.user,  # type: ignore[arg-type]  # role_required
            action=action,
            assignee=_assignee(request.POST.get("assignee", "")),
            reason=request.POST.get("reason", ""),
        )
    except ApplicationError as error:
        messages.error(request, error.message)
        return _back_to_queue(request)
    done = [pk for pk, said in outcome.items() if said == services.BULK_DONE]
    if done:
        messages.success(
            request,
            ngettext("%(n)s decision: done.", "%(n)s decisions: done.", len(done))
            % {"n": len(done)}
            + " "
            + ", ".join(f"#{pk}" for pk in done),
        )
    recorded = [pk for pk, said in outcome.items() if said == services.BULK_RECORDED]
    if recorded:
        messages.success(
            request,
            ngettext(
                "%(ids)s: your approval is recorded; the zone needs another reviewer's too.",
                "%(ids)s: your approvals are recorded; the zones need another reviewer's too.",
                len(recorded),
            )
            % {"ids": ", ".join(f"#{pk}" for pk in recorded)},
        )
    for pk, said in outcome.items():
        if said not in (services.BULK_DONE, services.BULK_RECORDED):
            messages.error(request, f"#{pk}: {said}")
    return _back_to_queue(request)


@require_POST
@role_required(selectors.REVIEW_ROLES)
def risk_flag_resolve(request: HttpRequest, pk: int) -> HttpResponse:
    """Acknowledge or dismiss a risk hotspot from the queue page, with a note."""
    action = request.POST.get("action", "")
    try:
        graph_risk_resolve(
            flag_id=pk,
            user=request.user,  # type: ignore[arg-type]  # login_required
            action=action,
            note=request.POST.get("note", ""),
        )
    except (NotFound, Forbidden):
        raise  # Django's 404 and 403 pages
    except ApplicationError as error:
        messages.error(request, error.message)
        return redirect("queue")
    done = {
        "acknowledge": _("Risk flag %(id)s acknowledged."),
        "dismiss": _("Risk flag %(id)s dismissed."),
    }
    messages.success(request, done[action] % {"id": pk})
    return redirect("queue")


@require_GET
@role_required(selectors.REVIEW_ROLES)
def queue_rows(request: HttpRequest) -> HttpResponse:
    """The queue's rows alone: the page reloads them when the socket says something moved."""
    return render(request, "queue/_rows.html", _queue_context(request))


@require_POST
@role_required(selectors.REVIEW_ROLES)
def filter_save(request: HttpRequest) -> HttpResponse:
    filters = selectors.QueueFilters.from_query(request.POST)
    query = urlencode(filters.as_query())
    try:
        gate_services.saved_filter_save(
            user=request.user,  # type: ignore[arg-type]  # login_required
            name=request.POST.get("name", ""),
            query=query,
        )
    except ApplicationError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, _("Filter saved."))
    return redirect(f"{reverse('queue')}?{query}")


@require_POST
@role_required(selectors.REVIEW_ROLES)
def filter_delete(request: HttpRequest, pk: int) -> HttpResponse:
    gate_services.saved_filter_delete(user=request.user, filter_id=pk)  # type: ignore[arg-type]
    return redirect("queue")


def _claims_with_verdicts(decision: Decision) -> list[dict[str, Any]]:
    """The claims as the page shows them, each with its place (`index`, what the verdict
    toggles send), the engine's choice for it (the toggle's preset:
    presenters.engine_choice) and the reviewers' recorded verdicts on it (`reviews`), oldest
    first."""
    claims = presenters.decision_claims(
        decision, selectors.cited_paragraphs(decision), selectors.cited_titles(decision)
    )
    reviews: dict[int, list[ClaimVerdict]] = {}
    for verdict in decision.claim_verdicts.select_related("reviewer").order_by("pk"):
        reviews.setdefault(verdict.claim, []).append(verdict)
    for index, claim in enumerate(claims):
        claim["index"] = index
        claim["engine_choice"] = presenters.engine_choice(str(claim.get("verdict", "")))
        claim["reviews"] = reviews.get(index, [])
    return claims


def _contradictions(decision: Decision) -> list[dict[str, Any]]:
    """The report's contradictions, each side's citation named and linked as the claims'."""
    body = decision.report.body if decision.report is not None else {}
    titles = selectors.cited_titles(decision)
    return [
        {
            **pair,
            "items": [
                {**item, "source": presenters.citation(item, titles)}
                for item in pair.get("items", [])
            ],
        }
        for pair in body.get("contradictions", [])
    ]


# The states in which a decision is not yet decided: its page says what is to be done.
WAITING = (State.PROPOSED, State.VALIDATED, State.APPROVAL_REQUIRED)


def decision_context(decision: Decision) -> dict[str, Any]:
    report = decision.report
    ended = selectors.decided(decision)
    decided = presenters.decided_text(ended.kind, ended.people, ended.at) if ended else ""
    if not decided and decision.gate == "required" and decision.state not in WAITING:
        # a person was to decide, but the system ended it (the review went late, ...)
        decided = _("Ended without a person's decision")
    return {
        "decision": decision,
        "claims": _claims_with_verdicts(decision),
        "contradictions": _contradictions(decision),
        "bars": presenters.score_bars(decision),
        "policy": report.policy if report is not None else {},
        # What completeness was counted against: the question's RequiredEvidence or the zone's.
        "required_evidence": (
            (report.body.get("score") or {}).get("required_evidence")
            or report.policy.get("required_evidence")
            if report is not None
            else None
        ),
        "events": selectors.decision_events(decision),
        "approvals": decision.approvals.select_related("reviewer").order_by("pk"),
        # One plain sentence on why the answer is here, each number beside its threshold.
        "why": presenters.explanation(
            decision.gate,
            report.body if report else {},
            report.policy if report else {},
            decided=decided,
        ),
        "decided": decided,
        "comments": decision.comments.select_related("author"),
        "comment_limit": services.COMMENT_LIMIT,
        # The answer as the user reads it, each of its claims marked with its check.
        "answer_pieces": presenters.answer_pieces(
            decision.answer, report.body if report is not None else {}
        ),
        # What the question asks, part by part, and which claim gives it.
        "addressing": (report.body.get("addressing") if report is not None else None),
        # What the asker receives, or will once it is released (decisions.delivery).
        "delivered": delivery_of(decision),
    }


@require_GET
@never_cache  # back after approving must not show the buttons of a state that has passed
@role_required(selectors.REVIEW_ROLES)
def decision_page(request: HttpRequest, pk: int) -> HttpResponse:
    decision = selectors.decision_for(request.user, pk, selectors.REVIEW_ROLES)
    context = decision_context(decision)
    held = decision.held()
    context.update(
        held_by=decision.claimed_by.get_username() if held and decision.claimed_by else None,
        mine=held and decision.claimed_by_id == request.user.pk,
        open=decision.state == State.APPROVAL_REQUIRED,
        approved_by_me=any(a.reviewer_id == request.user.pk for a in context["approvals"]),
        approvals_needed=_approvals_needed(decision),
        reason_limit=services.REASON_LIMIT,
        replacement_limit=services.MAX_REPLACEMENT,
        assignable=selectors.assignable(decision),
        assigned=decision.assigned_to.get_username() if decision.assigned_to else "",
        # The text it cites changed since it was given: said at the top, not only on the trail.
        evidence_changed=rereview.rereviews_open_of(decision),
        **_escalation_context(decision, request.user),
    )
    return render(request, "decision/decision.html", context)


def _escalation_context(decision: Decision, user: Any) -> dict[str, Any]:
    """Why the decision went up and whether the viewer is its authority; a blocked one's
    override so far and whether the viewer may add theirs."""
    note = selectors.escalations([decision.pk]).get(decision.pk) if decision.escalated_to else None
    return {
        "escalation": presenters.escalation_text(decision.zone, note),
        "escalation_topped": presenters.top_text(note.topped) if note and note.topped else "",
        # A graph answer's: why in a sentence, and the pairs of nodes with no relation.
        "graph_escalation": (
            escalation_explained(decision.report.body)
            if decision.escalated_to and decision.report is not None
            else None
        ),
        "may_send_back": services.may_send_back(decision, user),
        "override": override_progress(decision),
        "may_override": services.may_override(decision, user),
    }


def _approvals_needed(decision: Decision) -> int:
    return effective_policy(Coordinate.parse(decision.zone)).values.approvals_required


ACTIONS: dict[str, Callable[..., Any]] = {
    "claim": services.decision_claim,
    "release": services.decision_release,
    "approve": services.decision_approve,
    "reject": services.decision_reject,
    "send-back": services.decision_send_back,
    "override": services.decision_override,
    "comment": services.decision_comment,
    "assign": services.decision_assign,
}


def _who_acted_first(decision_id: int, error: ApplicationError, request_user: str) -> str:
    decision = Decision.objects.filter(pk=decision_id).first()
    last = selectors.last_actor(decision) if decision is not None else None
    if last is None:
        return error.message
    actor, kind, at = last
    if actor == request_user:
        return error.message  # the user's own earlier act: nobody acted first
    return _("%(message)s — %(actor)s acted first (%(kind)s at %(at)s).") % {
        "message": error.message,
        "actor": actor,
        "kind": kind,
        "at": timezone.localtime(at).strftime("%Y-%m-%d %H:%M:%S"),
    }


def _verdicts_from_form(text: str) -> Any:
    """The page's verdicts per claim: its script writes every claim's toggle and note into
    the form's `claims` field as the API's JSON list, which the service checks as it checks
    the API's. Empty (no script ran): none."""
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        raise ApplicationError(
            _("The verdicts per claim could not be read; reload the page and try again."),
            field="claims",
        ) from None


def _check_choices_made(decision: Decision, verdicts: Any) -> None:
    """Every claim the engine could not verify needs the reviewer's own choice: the page
    presets none, and a form sent without one (no script ran, or a toggle left open) is
    refused naming the claim, never approved or rejected on a default."""
    body = decision.report.body if decision.report is not None else {}
    chosen = {
        v.get("index")
        for v in (verdicts if isinstance(verdicts, list) else [])
        if isinstance(v, dict) and isinstance(v.get("supported"), bool)
    }
    for index in presenters.claims_awaiting_choice(body):
        if index not in chosen:
            raise ApplicationError(
                _(
                    "Say whether the evidence supports claim %(n)s: the engine could not "
                    "verify it, so nothing is chosen for you."
                )
                % {"n": index + 1},
                field=f"claims.{index}.supported",
            )


@require_POST
@role_required(selectors.REVIEW_ROLES)
def decision_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    if action not in ACTIONS:
        raise NotFound(_("no such action"))
    # The page shows nothing of a decision outside the user's zones; neither does an action.
    decision = selectors.decision_for(request.user, pk, selectors.REVIEW_ROLES)
    kwargs: dict[str, Any] = {"decision_id": pk, "user": request.user}
    try:
        if action in ("approve", "reject"):
            kwargs["reason"] = request.POST.get("reason", "")
            kwargs["claims"] = _verdicts_from_form(request.POST.get("claims", ""))
            _check_choices_made(decision, kwargs["claims"])
            if action == "approve":
                kwargs["replacement"] = request.POST.get("replacement") or None
        elif action in ("send-back", "override"):
            kwargs["reason"] = request.POST.get("reason", "")
        elif action == "comment":
            kwargs["text"] = request.POST.get("text", "")
        elif action == "assign":
            kwargs["assignee"] = _assignee(request.POST.get("assignee", ""))
        done_with = ACTIONS[action](**kwargs)
    except NotFound:
        raise  # Django's 404 page
    except Conflict as error:
        messages.error(request, _who_acted_first(pk, error, request.user.get_username()))
        return redirect("decision-page", pk=pk)
    except ApplicationError as error:
        messages.error(request, error.message)
        return redirect("decision-page", pk=pk)
    if action in ("comment", "assign"):
        messages.success(
            request,
            _("Your comment is on the trail.") if action == "comment" else _("Assignment saved."),
        )
        return redirect("decision-page", pk=pk)
    decision = done_with
    done = {
        "claim": _("You hold decision %(id)s."),
        "release": _("Decision %(id)s is back in the queue."),
        "approve": _("Decision %(id)s approved."),
        "reject": _("Decision %(id)s rejected."),
        "send-back": _("Decision %(id)s sent back to its agent for more evidence."),
        "override": _("Decision %(id)s released over its block by two people."),
    }
    if action == "override" and decision.state == State.FAILED:
        # The first of two people: the request is recorded, the answer stays blocked.
        messages.success(
            request,
            _(
                "Your override request for decision %(id)s is recorded (1 of 2); a second "
                "person with the override permission must complete it."
            )
            % {"id": pk},
        )
        return redirect("decision-page", pk=pk)
    if action == "approve" and decision.state == State.APPROVAL_REQUIRED:
        # One of several required approvals: recorded, but the decision still waits.
        given = decision.approvals.count()
        messages.success(
            request,
            _(
                "Your approval of decision %(id)s is recorded (%(given)s of %(needed)s); "
                "another reviewer must approve it too."
            )
            % {"id": pk, "given": given, "needed": max(given, _approvals_needed(decision))},
        )
        return redirect("queue")
    messages.success(request, done[action] % {"id": pk})
    if action in ("approve", "reject", "send-back"):
        return _next_item(request, pk)
    return redirect("decision-page", pk=pk)


def _next_item(request: HttpRequest, done: int) -> HttpResponse:
    """After a verdict, the next decision waiting for this reviewer, or the queue when none."""
    following = selectors.next_waiting(request.user, done)
    if following is None:
        messages.info(request, _("Nothing else is waiting for you."))
        return redirect("queue")
    return redirect("decision-page", pk=following)


def _assignee(username: str) -> str | None:
    """The username a decision is to be assigned to; none for an empty choice (unassign). The
    service answers alike for nobody of that name and for someone who does not review."""
    return username.strip() or None


# --- zone admin ----------------------------------------------------------------------------


@require_GET
@role_required(selectors.ADMIN_ROLES)
def zone_tree(request: HttpRequest) -> HttpResponse:
    zones = selectors.zone_policies(selectors.admin_zones(request.user))
    tree = presenters.policy_tree(zones)
    return render(
        request,
        "zone_admin/tree.html",
        {"rows": list(presenters.flatten(tree)), "fields": presenters.SHOWN_FIELDS},
    )


def _zone_context(
    zone: Any, form: PolicyForm, grant: GrantForm, advice_query: Any = None
) -> dict[str, Any]:
    effective = effective_policy(zone.coord)
    values = effective.values.as_dict()
    return {
        # The threshold advice beside the current tau, for the target and costs of `?...`.
        **advice_views.advice_context(zone.coord, advice_query or {}),
        "zone": zone,
        "form": form,
        "grant": grant,
        "effective": [
            (name, _shown(values[name]), effective.sources[name], name in effective.own)
            for name in zone_policy.FIELD_NAMES
        ],
        # Each version as the fields it changed against the one before (one more read for
        # the oldest shown, so its changes are against its predecessor, not against nothing).
        "history": _history(zone),
        "assignments": selectors.zone_assignments(zone),
        "whatif_days": selectors.settings.MARIA_WHATIF_DAYS,
        "open_conflicts": conflicts.open_count(zone.coordinate),
    }


def _history(zone: Any) -> list[policy_help.HistoryRow]:
    versions = policy_history(zone, limit=HISTORY_SHOWN + 1)
    shown, earlier = versions[:HISTORY_SHOWN], versions[HISTORY_SHOWN:]
    return policy_help.history_rows(shown, earlier=earlier[0] if earlier else None)


HISTORY_SHOWN = 50


def _shown(value: Any) -> Any:
    """A policy value as the page shows it: a list field's names joined, a number as is."""
    return ", ".join(value) if isinstance(value, list | tuple) else value


def _inherited(zone: Any) -> dict[str, Any]:
    parent = zone.coord.parent
    return effective_policy(parent).values.as_dict() if parent is not None else {}


@require_http_methods(["GET", "POST"])
@role_required(selectors.ADMIN_ROLES)
def zone_edit(request: HttpRequest, coordinate: str) -> HttpResponse:
    zone = selectors.zone_for_admin(request.user, coordinate)
    own = effective_policy(zone.coord).own
    if request.method == "POST":
        form = PolicyForm(request.POST, inherited=_inherited(zone))
        if form.is_valid():
            reason = form.cleaned_data.get("reason") or ""
            if not reason.strip():
                form.add_error("reason", _("A reason is required for every policy change."))
            else:
                try:
                    version = policy_update(
                        zone=zone,
                        overrides=form.overrides(),
                        reason=reason,
                        actor=request.user,  # type: ignore[arg-type]  # login_required
                    )
                except ApplicationError as error:
                    field = error.field if error.field in form.fields else None
                    form.add_error(field, error.message)
                else:
                    messages.success(
                        request,
                        _("Saved as version %(v)s.") % {"v": version.version},
                    )
                    return redirect("zone-edit", coordinate=zone.coordinate)
    else:
        form = PolicyForm(initial=own, inherited=_inherited(zone))
    context = _zone_context(zone, form, GrantForm(), request.GET)
    # A bad target or cost in the advice form: the page with the problem named, as a 400.
    status = 400 if context["advice_problem"] else 200
    return render(request, "zone_admin/zone.html", context, status=status)


@require_POST
@role_required(selectors.ADMIN_ROLES)
def zone_preview(request: HttpRequest, coordinate: str) -> HttpResponse:
    """The what-if table for the values in the form; changes nothing (POST only because the
    form is large and carries the CSRF token like every other form)."""
    zone = selectors.zone_for_admin(request.user, coordinate)
    form = PolicyForm(request.POST, inherited=_inherited(zone))
    problems: list[str] = []
    result = None
    if form.is_valid():
        overrides = form.overrides()
        merged = effective_policy(
            zone.coord, replace=(zone.coordinate, zone_policy.normalise_overrides(overrides))
        ).values
        problems = [f"{p.field}: {p.message}" for p in zone_policy.check_effective(merged)]
        if not problems:
            result = selectors.zone_whatif(zone, overrides)
    else:
        problems = [f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()]
    return render(
        request,
        "zone_admin/_whatif.html",
        {
            "problems": problems,
            "result": result,
            "rows": presenters.gate_rows(result) if result is not None else [],
            "days": selectors.settings.MARIA_WHATIF_DAYS,
        },
    )


@require_POST
@role_required(selectors.ADMIN_ROLES)
def zone_grant(request: HttpRequest, coordinate: str) -> HttpResponse:
    zone = selectors.zone_for_admin(request.user, coordinate)
    form = GrantForm(request.POST)
    if form.is_valid():
        user = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
        if user is None:
            messages.error(request, _("No user of that name."))
        else:
            try:
                role_grant(
                    user=user,
                    role=form.cleaned_data["role"],
                    scope=zone.coord,
                    granted_by=request.user,  # type: ignore[arg-type]
                )
            except ApplicationError as error:
                messages.error(request, error.message)
            else:
                messages.success(request, _("Role granted."))
    else:
        messages.error(request, _("Choose a user and a role."))
    return redirect("zone-edit", coordinate=zone.coordinate)


@require_POST
@role_required(selectors.ADMIN_ROLES)
def zone_revoke(request: HttpRequest, coordinate: str, pk: int) -> HttpResponse:
    zone = selectors.zone_for_admin(request.user, coordinate)
    assignment = get_object_or_404(RoleAssignment, pk=pk, scope=zone.coordinate)
    role_revoke(
        user=assignment.user,
        role=assignment.role,
        scope=zone.coord,
        revoked_by=request.user,  # type: ignore[arg-type]  # login_required
    )
    messages.success(request, _("Role revoked."))
    return redirect("zone-edit", coordinate=zone.coordinate)
