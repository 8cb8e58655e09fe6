// the login page's script, a file of its own so the Content-Security-Policy needs no inline script
  (function () {
    var q = new URLSearchParams(location.search);
    if (q.get('failed')) document.getElementById('login-error').hidden = false;
    else if (q.get('logout') || q.get('signed_out')) document.getElementById('login-info').hidden = false;
    // a deep link (e.g. /console/#/workers/w1) redirected here keeps its fragment: take it along after the login
    try {
      if (location.hash && location.hash.length > 2) sessionStorage.setItem('console.return', location.hash);
    } catch (e) { /* storage may be disabled */ }
  })();
