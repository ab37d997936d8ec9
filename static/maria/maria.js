// MARIA pages: the live queue socket (with reconnect and resync), SLA countdowns, keyboard
// shortcuts. No inline script anywhere: the Content-Security-Policy forbids it.
(function () {
  "use strict";

  var body = document.body;
  var me = body.getAttribute("data-user") || "";

  // --- a page come back from the back-forward cache ------------------------------------------
  // Its buttons were for the state it was shown in (a decision approved since still offered
  // "Approve"): a page that can change something is read again from the server. The server
  // also sends such pages with Cache-Control: no-store, which keeps most browsers from
  // restoring them at all.
  window.addEventListener("pageshow", function (e) {
    if (e.persisted && document.querySelector("form[method=post]")) window.location.reload();
  });

  // --- language switch submits on change ---------------------------------------------------
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });

  // --- countdowns ----------------------------------------------------------------------------
  function span(seconds) {
    var sign = seconds < 0 ? "-" : "";
    var s = Math.floor(Math.abs(seconds));
    var d = Math.floor(s / 86400); s -= d * 86400;
    var h = Math.floor(s / 3600); s -= h * 3600;
    var m = Math.floor(s / 60); s -= m * 60;
    if (d) return sign + d + "d " + h + "h";
    if (h) return sign + h + "h " + m + "m";
    if (m) return sign + m + "m " + s + "s";
    return sign + s + "s";
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-due]").forEach(function (el) {
      var due = Date.parse(el.getAttribute("data-due"));
      if (isNaN(due)) return;
      el.textContent = span((due - now) / 1000);
      el.classList.toggle("overdue", due < now);
    });
  }
  setInterval(tick, 1000);

  // --- the queue: rows reloaded from the server, never built from event data -----------------
  var rows = document.getElementById("queue-rows");
  var selected = null;
  function filterQuery() {
    var form = document.getElementById("queue-filters");
    return form ? new URLSearchParams(new FormData(form)).toString() : "";
  }
  var refreshTimer = null;
  function refreshRows() {
    if (!rows) return;
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(function () {
      fetch(rows.getAttribute("data-rows-url") + "?" + filterQuery(), {
        credentials: "same-origin",
        headers: { "X-Requested-With": "fetch" },
      })
        .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
        .then(function (html) {
          // the reviewer's ticks for the bulk form outlive the redraw: a live event must not
          // undo a choice she is in the middle of making
          var ticked = Array.prototype.map.call(
            rows.querySelectorAll("input[name=decisions]:checked"),
            function (box) { return box.value; });
          rows.innerHTML = html; // server-rendered and escaped (templates/queue/_rows.html)
          ticked.forEach(function (id) {
            var box = rows.querySelector('input[name=decisions][value="' + id + '"]');
            if (box) box.checked = true;
          });
          restoreSelection();
          tick();
          body.setAttribute("data-synced", String(Date.now()));
        })
        .catch(function () { /* the next event or reconnect resyncs */ });
    }, 120);
  }
  function restoreSelection() {
    if (!rows || selected === null) return;
    var row = rows.querySelector('tr[data-id="' + selected + '"]');
    if (row) row.classList.add("selected");
  }
  function moveSelection(step) {
    if (!rows) return;
    var all = Array.prototype.slice.call(rows.querySelectorAll("tr[data-id]"));
    if (!all.length) return;
    var index = all.findIndex(function (tr) { return tr.getAttribute("data-id") === selected; });
    index = Math.max(0, Math.min(all.length - 1, index + step));
    all.forEach(function (tr) { tr.classList.remove("selected"); });
    all[index].classList.add("selected");
    all[index].scrollIntoView({ block: "nearest" });
    selected = all[index].getAttribute("data-id");
  }

  // --- the filters in the address: a view of the queue is a link to share -------------------
  // The filter form reloads only the rows; the address follows it (empty fields left out),
  // so reloading, bookmarking or sending the link opens the same view, and the bulk form
  // returns to it.
  var filterForm = document.getElementById("queue-filters");
  function shownQuery() {
    var params = new URLSearchParams();
    new FormData(filterForm).forEach(function (value, name) { if (value) params.append(name, value); });
    return params.toString();
  }
  function syncAddress() {
    var query = shownQuery();
    var path = filterForm.getAttribute("action");
    history.replaceState(history.state, "", query ? path + "?" + query : path);
    var carried = document.getElementById("bulk-filters");
    if (carried) carried.value = query;
  }
  if (filterForm) {
    filterForm.addEventListener("change", syncAddress);
    filterForm.addEventListener("input", syncAddress);
    filterForm.addEventListener("submit", syncAddress);
  }

  // --- saved filters: save what the filter form shows now -----------------------------------
  // The filter form reloads the rows without changing the address, so the save form's hidden
  // fields (rendered from the address) are copied from the filter form when it is sent.
  var saveForm = document.getElementById("save-filter");
  if (saveForm) {
    saveForm.addEventListener("submit", function () {
      var form = document.getElementById("queue-filters");
      if (!form) return;
      new FormData(form).forEach(function (value, name) {
        var field = saveForm.querySelector('input[type="hidden"][name="' + name + '"]');
        if (field) field.value = value;
      });
    });
  }

  // --- the decision page: reacts to events about the decision it shows -----------------------
  var shown = body.getAttribute("data-decision");
  // Set once this page sends a form: the answer is on its way, and an event about the
  // decision (the user's own approval releasing it) must not reload the page under it.
  var leaving = false;
  // (Not when a check on the page stopped the form: then the page stays, and listens on.)
  document.addEventListener("submit", function (e) { if (!e.defaultPrevented) leaving = true; });
  function lockActions(message) {
    var banner = document.getElementById("banner");
    if (banner) { banner.textContent = message; banner.hidden = false; }
    document.querySelectorAll("#actions button, #actions input, .claim-verdict input").forEach(function (el) {
      el.disabled = true;
    });
  }
  function onDecisionEvent(event) {
    var d = event.decision || {};
    if (String(d.id) !== shown) return;
    var t = body.getAttribute("data-t-" + event.type.replace("decision.", "")) || "";
    if (event.type === "decision.claimed" && d.claimed_by && d.claimed_by !== me) {
      lockActions(t.replace("%s", d.claimed_by));
    } else if (event.type === "decision.resolved") {
      lockActions(t);
      var state = document.getElementById("state");
      if (state) state.textContent = state.getAttribute("data-state-" + d.state) || d.state;
    } else if (event.type === "decision.released" && d.claimed_by === null && !leaving) {
      window.location.reload();
    }
  }

  // --- the decision page: a verdict per claim -------------------------------------------------
  // Every claim's choice (preset to the engine's verdict where it verified or refuted the
  // claim, left open where it could not verify it) and note go with an approval or a
  // rejection, as the API's JSON list in the form's `claims` field. Every claim needs a
  // choice, and a rejection at least one claim marked unsupported (the server refuses it too).
  var actions = document.getElementById("actions");
  function claimVerdicts() {
    var list = [];
    document.querySelectorAll("fieldset.claim-choice").forEach(function (choice) {
      var index = parseInt(choice.getAttribute("data-index"), 10);
      var picked = choice.querySelector("input:checked");
      var note = document.getElementById("claim-" + index + "-note");
      list.push({
        index: index,
        supported: picked ? picked.value === "yes" : null,
        note: note ? note.value : ""
      });
    });
    return list;
  }
  if (actions) {
    actions.querySelectorAll('form[data-key="a"], form[data-key="r"]').forEach(function (form) {
      form.addEventListener("submit", function (e) {
        var list = claimVerdicts();
        var problem = document.getElementById("verdict-problem");
        var rejecting = form.getAttribute("data-key") === "r";
        var open = list.filter(function (v) { return v.supported === null; });
        if (open.length) {
          e.preventDefault();
          if (problem) {
            problem.textContent = actions.getAttribute("data-t-need-choice") || "";
            problem.hidden = false;
          }
          var unchosen = document.getElementById("claim-" + open[0].index + "-supported");
          if (unchosen) unchosen.focus();
          return;
        }
        if (rejecting && list.length && list.every(function (v) { return v.supported; })) {
          e.preventDefault();
          if (problem) {
            problem.textContent = actions.getAttribute("data-t-need-unsupported") || "";
            problem.hidden = false;
          }
          var first = document.querySelector("input.claim-supported");
          if (first) first.focus();
          return;
        }
        if (problem) problem.hidden = true;
        var field = form.querySelector('input[name="claims"]');
        if (field) field.value = list.length ? JSON.stringify(list) : "";
      });
    });
  }

  // --- the socket: reconnects with backoff, resyncs on every (re)open -----------------------
  var socketPath = body.getAttribute("data-socket");
  var live = document.getElementById("live");
  function setLive(state) {
    if (!live) return;
    live.setAttribute("data-state", state);
    live.textContent = live.getAttribute("data-label-" + state) || state;
    body.setAttribute("data-live", state);
  }
  var delay = 500;
  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + window.location.host + socketPath);
    var pinger = null;
    socket.addEventListener("open", function () {
      delay = 500;
      pinger = setInterval(function () {
        if (socket.readyState === 1) socket.send(JSON.stringify({ type: "ping" }));
      }, 25000);
    });
    socket.addEventListener("message", function (message) {
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      if (event.type === "queue.ready") {
        setLive("live");
        refreshRows(); // resync: whatever happened while the socket was down
      } else if (event.type && event.type.indexOf("decision.") === 0) {
        refreshRows();
        if (shown) onDecisionEvent(event);
      }
    });
    socket.addEventListener("close", function (e) {
      clearInterval(pinger);
      if (e.code === 4401 || e.code === 4403) { setLive("refused"); return; }
      setLive("reconnecting");
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    });
  }
  if (socketPath && "WebSocket" in window) connect();

  // --- keyboard ------------------------------------------------------------------------------
  var pendingG = false;
  function submitKey(key) {
    var form = document.querySelector('form[data-key="' + key + '"]');
    if (!form) return false;
    var button = form.querySelector("button");
    if (button && button.disabled) return false;
    if (form.requestSubmit) form.requestSubmit(); else form.submit();
    return true;
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var target = e.target;
    // A focused toggle (a claim's verdict) takes no text: the shortcuts still work there.
    var toggle = target && target.tagName === "INPUT" &&
                 (target.type === "checkbox" || target.type === "radio");
    var typing = target && !toggle && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
                            target.tagName === "SELECT" || target.isContentEditable);
    if (typing) return;
    var key = e.key;
    if (key === "?") {
      var sheet = document.getElementById("shortcuts");
      if (sheet && sheet.showModal && !sheet.open) sheet.showModal();
      e.preventDefault();
      return;
    }
    if (pendingG) {
      pendingG = false;
      if (key === "q") window.location.href = "/queue/";
      return;
    }
    if (key === "g") { pendingG = true; return; }
    if (key === "j") { moveSelection(1); return; }
    if (key === "k") { moveSelection(-1); return; }
    if (key === "Enter" && rows && selected !== null) {
      window.location.href = "/queue/decisions/" + selected + "/";
      return;
    }
    if (key === "a") {
      // Approving asks first: the reason field takes the focus, and Enter in it approves.
      var why = document.getElementById("approve-reason");
      var approve = document.getElementById("approve");
      if (why && !why.disabled && approve && !approve.disabled) {
        why.focus();
        e.preventDefault();
      }
      return;
    }
    if (key === "c" || key === "l") { if (submitKey(key)) e.preventDefault(); return; }
    if (key === "r") {
      var reason = document.getElementById("reject-reason");
      if (reason && !reason.disabled) {
        if (reason.value.trim()) submitKey("r"); else reason.focus();
        e.preventDefault();
      }
    }
  });
})();
