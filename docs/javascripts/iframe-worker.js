/*
 * Search for the site opened from files (site/index.html in a browser, no server).
 *
 * Material for MkDocs runs its search in a Web Worker, and a browser refuses `new Worker(...)` on a file:// page.
 * Its `offline` plugin therefore adds a shim that runs the worker's script in a hidden iframe instead, but fetches
 * that shim from a CDN, which a site read offline cannot do. This is the project's own shim, shipped with the site
 * (mkdocs.yml lists it under `extra.polyfills`; a polyfill whose path names "iframe-worker" keeps the plugin from
 * adding the CDN's): the same contract Material's worker script expects, `window.IFrameWorker` beside a `Worker`
 * that posts and receives messages, and an `importScripts` that returns a promise (Material awaits it to load the
 * stemmers of a language other than English). Served over http(s), the browser's own Worker is left alone.
 */
(function () {
  "use strict";
  if (location.protocol !== "file:") {
    return;
  }

  // A script loaded into the iframe's document: classic scripts load from file:// where workers and fetch do not.
  function load(scope, src) {
    return new Promise(function (resolve, reject) {
      var script = scope.document.createElement("script");
      script.src = src;
      script.onload = function () { resolve(); };
      script.onerror = function () { reject(new Error("could not load " + src)); };
      scope.document.head.appendChild(script);
    });
  }

  class IFrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.onerror = null;
      this.pending = [];
      this.ready = false;
      var src = new URL(url, location.href).href;
      this.frame = document.createElement("iframe");
      this.frame.style.display = "none";
      this.frame.setAttribute("aria-hidden", "true");
      (document.body || document.documentElement).appendChild(this.frame);
      // The iframe has no src: it keeps its first, empty document, of this page's origin, so its globals can be set.
      var scope = this.frame.contentWindow;
      var worker = this;
      scope.postMessage = function (data) { worker.emit("message", data); };
      scope.importScripts = function () {
        var urls = Array.prototype.slice.call(arguments);
        return urls.reduce(function (done, next) {
          return done.then(function () { return load(scope, new URL(next, src).href); });
        }, Promise.resolve());
      };
      load(scope, src).then(
        function () {
          worker.ready = true;
          worker.pending.splice(0).forEach(function (data) { worker.deliver(data); });
        },
        function (error) { worker.emit("error", error.message); }
      );
    }

    postMessage(data) {
      if (this.ready) {
        this.deliver(data);
      } else {
        this.pending.push(data);
      }
    }

    terminate() {
      this.frame.remove();
    }

    // To the worker's script: a message event on the iframe's window, later, as a worker receives it.
    deliver(data) {
      var scope = this.frame.contentWindow;
      setTimeout(function () { scope.dispatchEvent(new scope.MessageEvent("message", { data: data })); }, 0);
    }

    // To the page: a message (or error) event on this object, and its on... handler.
    emit(type, data) {
      var worker = this;
      setTimeout(function () {
        var event = type === "error" ? new ErrorEvent("error", { message: data }) : new MessageEvent(type, { data: data });
        worker.dispatchEvent(event);
        var handler = worker["on" + type];
        if (typeof handler === "function") {
          handler.call(worker, event);
        }
      }, 0);
    }
  }

  window.IFrameWorker = IFrameWorker;
  window.Worker = IFrameWorker;
})();
