// live.js follows the voyage page: it listens to the voyage's event
// stream (server-sent events) and puts each part of the page the server
// sends in place of the element with the same id, or at the end of its
// container, without reloading. The parts are rendered, and every stored
// text in them escaped, by the server's templates; the page's
// Content-Security-Policy runs no script but this file's.
'use strict';
(function () {
  const root = document.getElementById('voyage');
  if (!root || !window.EventSource) {
    return;
  }
  const live = document.getElementById('live');
  function status(text, cls) {
    if (live) {
      live.textContent = text;
      live.className = 'live ' + cls;
    }
  }

  function place(p) {
    const t = document.createElement('template');
    t.innerHTML = p.html;
    const node = t.content.firstElementChild;
    if (!node) {
      return;
    }
    const old = document.getElementById(p.id);
    if (old) {
      // Keep open what the reader opened.
      for (const d of old.querySelectorAll('details[open]')) {
        const again = d.id && node.querySelector('#' + CSS.escape(d.id));
        if (again) {
          again.open = true;
        }
      }
      old.replaceWith(node);
    } else if (p.into) {
      const into = document.getElementById(p.into);
      if (!into) {
        return;
      }
      into.append(node);
    } else {
      return;
    }
    if (node.classList.contains('item')) {
      node.classList.add('fresh');
    }
  }

  const events = new EventSource(root.dataset.events);
  events.addEventListener('open', function () {
    status('live', 'on');
  });
  events.addEventListener('error', function () {
    status('reconnecting…', 'off');
  });
  events.addEventListener('update', function (ev) {
    const u = JSON.parse(ev.data);
    for (const p of u.parts) {
      place(p);
    }
    root.dataset.seq = String(u.seq);
    status('live', 'on');
  });
  events.addEventListener('failure', function (ev) {
    events.close();
    status('stopped: ' + JSON.parse(ev.data).error, 'failed');
  });
})();
