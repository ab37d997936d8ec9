"""What the decision pipeline asks of the code that builds on it, so that its services and
outbox never import its tasks or the reviewer pages. Each is sent after commit.

- `validation_wanted(decision_id, bundle_hash)`: a proposed decision waits to be validated
  (decisions.tasks schedules it).
- `validations_taken(decision_ids)`: a batch validated these decisions; their own queued
  tasks can be dropped (decisions.tasks).
- `webhook_due(outbox_id)`: an outbox row holds a webhook to send (decisions.tasks).
- `queue_event(zone, event)`: an outbox row holds a reviewer-queue event for the zone's
  sockets (gates.push). A receiver that fails raises, and the outbox row is kept for the
  sweep.

Sent at once, not after commit, and answered:

- `graph_gate_wanted(zone, keys, strict)`: the graph gate on the graph nodes an agent's answer
  names (graph.queries.evidence_graph_gate answers with the gate, the cohesion, tau_c and the
  gaps); `strict`: a key the zone's graph lacks is refused, naming it. No answer: no graph.
"""

from __future__ import annotations

from django.dispatch import Signal

validation_wanted = Signal()
validations_taken = Signal()
webhook_due = Signal()
queue_event = Signal()
graph_gate_wanted = Signal()
