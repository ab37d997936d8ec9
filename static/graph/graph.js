/* The graph pages: draw evidence subgraphs and responsibility chains with Cytoscape.js.
   Data comes from the REST API (same origin, session cookie); no inline script (CSP). */
(function () {
  "use strict";
  var NODE_COLOUR = {
    person: "#4e79a7", decision: "#f28e2b", amount: "#59a14f", deadline: "#edc948",
    document: "#76b7b2", policy: "#b07aa1", risk: "#e15759",
    department: "#9c755f", obligation: "#bab0ac"
  };
  var EDGE_COLOUR = {
    approved_by: "#1f77b4", proposed_by: "#ff7f0e", depends_on: "#2ca02c",
    constrained_by: "#9467bd", allocated_from: "#8c564b", deadline_for: "#bcbd22",
    escalated_to: "#d62728", references: "#7f7f7f", mitigates: "#17becf", caused_by: "#e377c2"
  };

  function red(share) {
    var s = Math.max(0, Math.min(1, share || 0));
    var g = Math.round(255 * (1 - s));
    return "rgb(255," + g + "," + g + ")";
  }

  // The page's words, in its language: data-t-* attributes of the result section, with
  // %(name)s parts filled in here (the server translated them; the script only fills).
  function words(section) {
    return function (key, parts) {
      var text = section.getAttribute("data-t-" + key) || key;
      return text.replace(/%\((\w+)\)s/g, function (_, name) {
        return parts && name in parts ? String(parts[name]) : "";
      });
    };
  }

  // An edge's label in the page's language: the legend carries each edge type's word
  // (data-t-edge-approved_by, ...); a type it does not know is shown as the API names it.
  function edgeWord(type) {
    var legend = document.querySelector(".graph-legend");
    return (legend && legend.getAttribute("data-t-edge-" + type)) || type;
  }

  function draw(container, nodes, edges, gaps) {
    // A level's answer may hold two zones' nodes of one key: where the API names node ids
    // (nodes' id, edges' source_id and target_id), the drawing tells them apart by id.
    var byId = nodes.length > 0 && nodes.every(function (n) { return n.id != null; })
      && edges.every(function (e) { return e.source_id != null && e.target_id != null; });
    function nodeRef(n) { return byId ? "n" + n.id : n.key; }
    // a gap joins the first nodes of two pieces, named by id and by key
    function end(gap, k) { return byId && gap.ids ? "n" + gap.ids[k] : gap.keys[k]; }
    var elements = [];
    nodes.forEach(function (n) {
      elements.push({ data: {
        id: nodeRef(n), label: n.label, type: n.type,
        colour: NODE_COLOUR[n.type] || "#999", ring: red(n.risk), ringWidth: n.risk ? 2 + 8 * n.risk : 1
      } });
    });
    edges.forEach(function (e, i) {
      elements.push({ data: {
        id: "e" + i,
        source: byId ? "n" + e.source_id : e.source,
        target: byId ? "n" + e.target_id : e.target,
        label: edgeWord(e.type),
        colour: EDGE_COLOUR[e.type] || "#999", width: 1 + 3 * (e.weight || 0), line: "solid"
      } });
    });
    (gaps || []).forEach(function (gap, i) {
      elements.push({ data: {
        id: "gap" + i, source: end(gap, 0), target: end(gap, 1), label: edgeWord("gap"),
        colour: "#b3261e", width: 2, line: "dashed"
      } });
    });
    return window.cytoscape({
      container: container,
      elements: elements,
      layout: { name: "breadthfirst", directed: true, spacingFactor: 1.2 },
      style: [
        { selector: "node", style: {
          "background-color": "data(colour)", "label": "data(label)", "font-size": 10,
          "text-wrap": "ellipsis", "text-max-width": 140,
          "border-color": "data(ring)", "border-width": "data(ringWidth)"
        } },
        { selector: "edge", style: {
          "line-color": "data(colour)", "target-arrow-color": "data(colour)",
          "target-arrow-shape": "triangle", "curve-style": "bezier", "width": "data(width)",
          "line-style": "data(line)", "label": "data(label)", "font-size": 8,
          "text-rotation": "autorotate"
        } }
      ]
    });
  }

  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        return r.json().then(function (body) {
          if (!r.ok) { throw new Error((body.error && body.error.message) || r.statusText); }
          return body;
        });
      });
  }

  function explorer(form) {
    var canvas = document.getElementById("graph-canvas");
    var t = words(document.querySelector(".graph-result"));
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var data = new FormData(form);
      var params = new URLSearchParams({ q: data.get("q"), zone: data.get("zone"), method: data.get("method") });
      if (data.get("h")) { params.set("h", data.get("h")); }
      var answer = getJSON(form.dataset.queryUrl + "?" + params.toString());
      var risk = data.get("risk")
        ? getJSON(form.dataset.riskUrl + "?" + new URLSearchParams({ zone: data.get("zone") }).toString())
        : Promise.resolve({ nodes: [] });
      Promise.all([answer, risk]).then(function (both) {
        var body = both[0];
        var share = {};
        both[1].nodes.forEach(function (n) { share[n.key] = n.share; });
        body.subgraph.nodes.forEach(function (n) { n.risk = share[n.key] || 0; });
        var gate = document.getElementById("graph-gate");
        var meter = document.getElementById("graph-cohesion");
        if (body.gate === null) {
          // Nothing in the graph bears on the question: no evidence, so no gate.
          gate.className = "graph-gate none";
          gate.textContent = t("no-gate");
          meter.value = 0;
          document.getElementById("graph-cohesion-text").textContent = "";
          document.getElementById("graph-answer").textContent = body.answer || "";
          document.getElementById("graph-gaps").textContent = "";
          draw(canvas, [], [], []);
          return;
        }
        gate.className = "graph-gate " + body.gate;
        gate.textContent = t("gate", { gate: t("gate-" + body.gate) }) +
          (body.escalated_to ? t("escalated", { level: body.escalated_to }) : "");
        meter.value = body.cohesion;
        meter.low = body.cohesion_tau / 2;
        meter.optimum = 1;
        meter.high = body.cohesion_tau;
        document.getElementById("graph-cohesion-text").textContent =
          t("cohesion", { cohesion: body.cohesion.toFixed(3), tau: body.cohesion_tau }) +
          // Which method answered, and why (chosen by query type, or asked for).
          (body.method_choice && body.method_choice.asked === "auto" ? " · " + body.method_choice.reason : "");
        document.getElementById("graph-answer").textContent = body.answer || "";
        var list = document.getElementById("graph-gaps");
        list.textContent = "";
        var dashed = [];
        body.structural_gaps.forEach(function (gap) {
          var li = document.createElement("li");
          li.textContent = t("gap", { one: gap.between[0].join(", "), other: gap.between[1].join(", ") });
          list.appendChild(li);
          dashed.push({
            keys: [gap.between[0][0], gap.between[1][0]],
            ids: gap.between_ids ? [gap.between_ids[0][0], gap.between_ids[1][0]] : null
          });
        });
        draw(canvas, body.subgraph.nodes, body.subgraph.edges, dashed);
      }).catch(function (error) {
        document.getElementById("graph-answer").textContent = error.message;
      });
    });
    // A question in the address (?zone=&q=, as the risk hotspots link) is asked at once.
    if (form.elements.q.value) { form.requestSubmit(); }
  }

  function responsibility(container) {
    getJSON(container.dataset.responsibilityUrl).then(function (body) {
      draw(container, body.nodes, body.edges, []);
    }).catch(function (error) { container.textContent = error.message; });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("graph-ask");
    if (form) { explorer(form); }
    document.querySelectorAll("[data-responsibility-url]").forEach(responsibility);
  });
  if (document.readyState !== "loading") {
    document.querySelectorAll("[data-responsibility-url]:not([data-drawn])").forEach(function (el) {
      el.dataset.drawn = "1"; responsibility(el);
    });
  }
})();
