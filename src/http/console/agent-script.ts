/**
 * The agent chat page's script (served as /console/assets/agent-chat.js; docs/console.md "Agents").
 * It only enhances a page that works without it: while an invocation runs, it asks the page's
 * `data-agent-poll` URL for the invocation's fragment (status, tool calls so far, answer, usage)
 * about once a second and puts it in place, so each tool call shows as it happens; it stops once
 * the invocation ended, or when the console refuses (the session ended: a reload shows the sign-in
 * page). The fragment is rendered by the server's escaping templates.
 */
export const AGENT_CHAT_JS = `'use strict';
(function () {
  var box = document.querySelector('[data-agent-poll]');
  if (!box || typeof fetch !== 'function') return;
  var url = box.getAttribute('data-agent-poll');
  var delay = 1000;
  var tick = function () {
    fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (response) {
        if (response.status >= 400 && response.status < 500) return null;
        if (!response.ok) throw new Error('status ' + response.status);
        return response.json();
      })
      .then(function (state) {
        if (!state) return;
        delay = 1000;
        box.innerHTML = state.html;
        if (state.status === 'RUNNING') setTimeout(tick, delay);
        else box.removeAttribute('data-agent-poll');
      })
      .catch(function () {
        delay = Math.min(delay * 2, 15000);
        setTimeout(tick, delay);
      });
  };
  setTimeout(tick, delay);
})();
`;
