  var D = JSON.parse(document.getElementById("audit-data").textContent);
