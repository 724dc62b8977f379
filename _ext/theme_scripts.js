/* The theme's scripts off the first seconds: every page of the site (_ext/theme_scripts.py).

   pydata-sphinx-theme's bootstrap.js and pydata-sphinx-theme.js and sphinx-book-theme.js
   used to run as the page loaded, right after its first paint: on an emulated slow phone
   0.35 s, 0.11 s and 0.11 s of main thread (issue 39), while the page was still being
   laid out. Nothing they do is needed to read: the colour theme is set in the <head>
   (_templates/static/webpack-macros.html), the sidebar's scroll to the current chapter and
   the print classes are done here, cheaply; everything else (the sidebar toggles, the
   download and launch menus, search and Ctrl+K, the dark-mode switch, tooltips, the
   contents' highlight as one scrolls) answers a reader's action. So this script:

   - fetches their text when the page has been parsed (network only; the theme preloaded
     them at the same point), and runs nothing;
   - runs them at the reader's first action: at once on a press (pointer, touch or key),
     before its click, so that the click that follows finds their handlers; when the mouse
     moves or the page scrolls, on the next idle moment;
   - if a click on a theme control (or the search's Ctrl+K) comes before the text has
     arrived, holds it and replays it once the scripts have run (and if the text cannot be
     fetched, as from file://, loads them as ordinary scripts).
   The scripts run once, in their order, as if loaded with the page (they wait for
   DOMContentLoaded only when it has not fired). */
(() => {
  "use strict";
  const urls = document.currentScript.dataset.load.split(" ").filter(Boolean)
    .map((url) => new URL(url, document.baseURI).href);
  // What the theme's scripts drive: a click on one of these must reach them.
  const CONTROLS = [".primary-toggle", ".secondary-toggle", ".theme-switch-button",
    ".search-button", ".search-button__button", "[data-bs-toggle]", "#pst-back-to-top",
    "#pst-collapse-sidebar-button", ".btn-fullscreen-button"].join(", ");
  let state = "waiting";   // -> "fetching" -> "fetched" -> "ran" (or "failed" -> "loading" -> "ran")
  let code = null;
  let wanted = false;      // a reader's action asked for them before their text arrived
  const before = [];       // what to do just before they run
  const after = [];        // what to do once they have run

  const finished = () => {
    state = "ran";
    window.themeScriptsRan = performance.now();
    for (const then of after.splice(0)) then();
  };
  const asFiles = () => {  // the text could not be fetched: ordinary scripts, in order
    state = "loading";
    for (const then of before.splice(0)) then();
    urls.forEach((url, i) => {
      const script = document.createElement("script");
      script.src = url;
      script.async = false;
      if (i === urls.length - 1) script.onload = script.onerror = finished;
      document.body.append(script);
    });
  };
  const fetchCode = () => {
    if (state !== "waiting") return;
    state = "fetching";
    Promise.all(urls.map((url) => fetch(url).then((r) => {
      if (!r.ok) throw new Error(`${url}: ${r.status}`);
      return r.text();
    }))).then((texts) => {
      code = texts;
      state = "fetched";
      if (wanted) run();
    }, () => {
      state = "failed";
      if (wanted) asFiles();
    });
  };
  // Run the scripts now if their text is here (an inline script runs as it is inserted);
  // true once they have run.
  const run = () => {
    if (state === "ran") return true;
    if (state === "failed") asFiles();
    if (state !== "fetched") {
      wanted = true;
      fetchCode();
      return false;
    }
    for (const then of before.splice(0)) then();
    code.forEach((text, i) => {
      const script = document.createElement("script");
      script.textContent = `${text}\n//# sourceURL=${urls[i]}`;
      document.body.append(script);
    });
    code = null;
    finished();
    return true;
  };
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 1));
  const soon = () => { if (state !== "ran") idle(run, { timeout: 1000 }); };

  for (const type of ["pointerdown", "touchstart"]) {
    window.addEventListener(type, run, { capture: true, passive: true });
  }
  // A key runs them too; the search's shortcut (Ctrl+K, or ⌘K: pydata-sphinx-theme listens
  // on window) pressed before their text has arrived is held and pressed again once they
  // have run, as a click on a control is (a slow phone's reader would lose it otherwise).
  window.addEventListener("keydown", (event) => {
    if (run() || !(event.ctrlKey || event.metaKey) || event.shiftKey || event.altKey
        || !/^k$/i.test(event.key)) return;
    event.preventDefault();
    const { key, code: keyCode, ctrlKey, metaKey } = event;
    after.push(() => window.dispatchEvent(new KeyboardEvent("keydown",
      { key, code: keyCode, ctrlKey, metaKey, bubbles: true, cancelable: true })));
  }, true);
  for (const type of ["mousemove", "wheel"]) {
    window.addEventListener(type, soon, { capture: true, passive: true, once: true });
  }
  // The page's scroll (not the capture phase: the sidebar's own scroll, below, is no action).
  const scrolled = (event) => {
    if (event.target !== document) return;
    window.removeEventListener("scroll", scrolled, true);
    soon();
  };
  window.addEventListener("scroll", scrolled, { capture: true, passive: true });
  document.addEventListener("click", (event) => {
    const control = event.target instanceof Element && event.target.closest(CONTROLS);
    if (!control || run()) return;
    event.preventDefault();              // replayed once the scripts have run
    event.stopImmediatePropagation();
    after.push(() => control.click());
  }, true);
  // A tooltip's button under the pointer when the scripts ran gets its tooltip.
  after.push(() => {
    const hovered = [...document.querySelectorAll(":hover")].pop();
    const tip = hovered && hovered.closest('[data-bs-toggle="tooltip"]');
    if (tip) tip.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", fetchCode);
  } else {
    fetchCode();
  }

  // sphinx-book-theme's print classes: the header, sidebars and footers are not printed.
  const NO_PRINT = [".bd-header-announcement", ".bd-header", ".bd-header-article",
    ".bd-sidebar-primary", ".bd-sidebar-secondary", ".bd-footer-article",
    ".bd-footer-content", ".bd-footer"].join(", ");
  for (const el of document.querySelectorAll(NO_PRINT)) el.classList.add("noprint");

  // The sidebar at the current chapter, as pydata-sphinx-theme's scrollToActive placed it,
  // but after the first paint (reading a position before it laid out the whole page) and
  // only when the chapter's link would be out of view (the theme scrolled whenever it was
  // in the lower half of the window, hiding the book's title: issue 28). A position kept
  // from the last page (sessionStorage, as the theme keeps it) is restored at once.
  const bar = document.querySelector("div.bd-sidebar");
  if (bar && document.querySelector(".bd-docs-nav")) {
    const KEY = "sidebar-scroll-top";
    const kept = parseInt(sessionStorage.getItem(KEY), 10);
    if (!isNaN(kept)) {
      bar.scrollTop = kept;
    } else {
      requestAnimationFrame(() => setTimeout(() => {
        const links = bar.querySelectorAll(".bd-docs-nav .active");
        if (!links.length) return;
        const link = links[links.length - 1].getBoundingClientRect();
        const below = link.bottom - bar.getBoundingClientRect().top - bar.clientHeight;
        if (below > 0) bar.scrollTop = below + bar.clientHeight * 0.25;
      }));
    }
    // The theme's scrollToActive, when it runs, restores this same position.
    const keep = () => sessionStorage.setItem(KEY, bar.scrollTop);
    window.addEventListener("pagehide", keep);
    before.push(keep);
  }
})();
