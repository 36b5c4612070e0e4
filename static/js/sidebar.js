/* The sidebar: days counted in the browser's time zone, item menus, rename in place
   (Escape cancels it, and stops nothing else), delete at once, and the Undo toast. */
(function () {
  "use strict";

  function byId(id) { return document.getElementById(id); }

  // The server groups conversations by day in the zone it is told (the cookie); a page
  // drawn in another zone is redrawn once the cookie says the browser's.
  function rememberTimeZone() {
    var zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return; }
    if (!/^[A-Za-z0-9_+\-\/]+$/.test(zone)) return;
    document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax";
    var panel = document.querySelector(".sidebar-panel");
    var search = byId("sidebar-search-input");
    if (panel && search && panel.dataset.timeZone !== zone && window.htmx) {
      panel.dataset.timeZone = zone;
      htmx.trigger(search, "search");
    }
  }

  // The toast lives outside the sidebar, which is off screen on a phone until opened.
  var toastTimer = null;
  function armToast() {
    var toast = byId("undo-toast");
    if (!toast) return;
    if (toast.parentElement !== document.body) document.body.appendChild(toast);
    clearTimeout(toastTimer);
    var undo = toast.querySelector(".undo[data-seconds]");
    if (!undo) return;
    toastTimer = setTimeout(function expire() {
      if (toast.contains(document.activeElement) || toast.matches(":hover")) {
        toastTimer = setTimeout(expire, 1000); // not while someone is about to press Undo
        return;
      }
      undo.remove();
    }, Number(undo.dataset.seconds || 8) * 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    armToast();
    rememberTimeZone();
  });
  document.addEventListener("htmx:oobAfterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "undo-toast") armToast();
  });

  // --- the item menu: one element, put under the item whose button opened it -----------
  var opener = null; // the item's menu button while the menu is open

  function menu() { return byId("item-menu"); }

  function titleOf(button) {
    var link = button.closest("li").querySelector("a[id^=conversation-link-]");
    return link ? link.textContent.trim() : "";
  }

  function openMenu(button) {
    var panel = menu();
    if (!panel) return;
    closeMenu(false);
    var title = titleOf(button);
    button.setAttribute("aria-label", "Actions for “" + title + "”");
    panel.querySelectorAll("[data-action]").forEach(function (item) {
      item.setAttribute("aria-label", item.dataset.label.replace("%s", title));
    });
    panel.querySelector("[data-action=export-md]").href = button.dataset.exportMd;
    panel.querySelector("[data-action=export-json]").href = button.dataset.exportJson;
    button.closest("li").appendChild(panel);
    panel.hidden = false;
    button.setAttribute("aria-expanded", "true");
    opener = button;
    panel.querySelector("[role=menuitem]").focus();
  }

  // The menu goes back where it lives, out of the list that htmx redraws.
  function closeMenu(refocus) {
    var panel = menu();
    if (!panel || !opener) return;
    var button = opener;
    opener = null;
    panel.hidden = true;
    document.querySelector(".sidebar-panel").appendChild(panel);
    button.setAttribute("aria-expanded", "false");
    if (refocus) button.focus();
  }

  function act(action, button) {
    var li = button.closest("li");
    if (action === "rename") {
      htmx.ajax("GET", button.dataset.rename, { source: button, target: li, swap: "outerHTML" });
    } else if (action === "delete") {
      li.hidden = true; // gone at once; back if the server says no
      button.addEventListener("htmx:afterRequest", function (event) {
        if (!event.detail.successful) li.hidden = false;
      }, { once: true });
      htmx.ajax("POST", button.dataset.delete, { source: button, target: "#sidebar-list", swap: "innerHTML" });
    }
  }

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var button = target && target.closest(".item-menu-button");
    if (button) {
      if (opener === button) closeMenu(true); else openMenu(button);
      return;
    }
    var item = target && target.closest("#item-menu [data-action]");
    if (item && opener) {
      var from = opener;
      closeMenu(false);
      act(item.dataset.action, from); // export links download on their own
      return;
    }
    if (opener && !(target && target.closest("#item-menu"))) closeMenu(false);
  });

  // Arrows move within the open menu; Tab leaves it closed.
  document.addEventListener("keydown", function (event) {
    var panel = menu();
    if (!opener || !panel || !panel.contains(event.target)) return;
    var items = Array.prototype.slice.call(panel.querySelectorAll("[role=menuitem]"));
    var at = items.indexOf(event.target);
    var next = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[event.key];
    if (next !== undefined) {
      event.preventDefault();
      items[(next + items.length) % items.length].focus();
    } else if (event.key === "Tab") {
      closeMenu(false);
    } else if (event.key === " " && event.target.tagName === "A") {
      event.preventDefault();
      event.target.click();
    }
  });

  function cancelRename(form) {
    var input = form.querySelector("input[name=title]");
    var li = form.closest("li");
    htmx.ajax("GET", input.dataset.cancel, { target: li, swap: "outerHTML" }).then(function () {
      focusLink(form.dataset.item);
    });
  }

  function focusLink(itemId) {
    var link = document.querySelector("#" + itemId + " a[id^=conversation-link-]");
    if (link) link.focus();
  }

  // Capture: Escape in the sidebar belongs to it, not to the page's Stop shortcut.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || !(event.target instanceof Element)) return;
    if (!event.target.closest("#sidebar, #undo-toast")) return;
    event.stopPropagation();
    var form = event.target.closest(".rename-in-place");
    if (form) {
      event.preventDefault();
      cancelRename(form);
      return;
    }
    if (opener) {
      event.preventDefault();
      closeMenu(true);
    }
  }, true);

  // A title field that appears is ready to type over.
  document.addEventListener("htmx:load", function (event) {
    var input = event.detail.elt.querySelector && event.detail.elt.querySelector(".rename-in-place input[name=title]");
    if (input) {
      input.focus();
      input.select();
    }
  });

  // A saved title: focus goes back to the conversation's link.
  document.addEventListener("htmx:afterSettle", function (event) {
    var form = event.detail.elt;
    if (form && form.matches && form.matches(".rename-in-place")) {
      var item = byId(form.dataset.item);
      if (item && !item.querySelector(".rename-in-place")) focusLink(form.dataset.item);
    }
  });

  // The list is about to be redrawn (a search, a delete): the open menu leaves it first.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var panel = menu();
    if (opener && panel && event.detail.target && event.detail.target.contains(panel)) closeMenu(false);
  });
})();
