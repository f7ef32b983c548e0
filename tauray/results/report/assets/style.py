"""Stylesheet and the in-page render check of the report."""

CSS = """
mark.lost{background:#ffd7a8;color:#7a2e00;padding:0 3px;border-radius:3px;white-space:nowrap}
table.utterances td p{margin:0 0 4px}table.utterances audio{height:28px;width:220px}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1280px;padding:12px 24px;
color:#1d232a;background:#fff}
nav{font-size:13px;margin-bottom:6px}h1{font-size:22px;margin:4px 0 8px}h2{font-size:18px;margin:28px 0 8px;
border-bottom:1px solid #d7dde4;padding-bottom:3px}h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border:1px solid #d7dde4;padding:3px 7px;
vertical-align:top;text-align:left}th{background:#f1f4f7}table.figures td[data-value]{text-align:right;
font-variant-numeric:tabular-nums}tr.fail td{background:#fdecec}tr.sync td{background:#eef5ff;font-size:12px}
tr.user td:first-child{border-left:3px solid #b35c00}tr.agent td:first-child{border-left:3px solid #1f5fa8}
.ok{color:#18794e;font-weight:600}.bad{color:#c0262d;font-weight:600}.na{color:#8a949e}.note{color:#5b6670;
font-size:12.5px;max-width:980px}.meta{color:#3d4852}pre{margin:0;white-space:pre-wrap;word-break:break-word;
font-size:12px;max-width:460px}code{font-size:12px}dl.summary{display:grid;grid-template-columns:max-content 1fr;
gap:2px 14px;font-size:13px}dl.summary dt{color:#5b6670}dl.summary dd{margin:0}.chat{max-width:900px}
.msg{border-radius:8px;padding:6px 10px;margin:6px 0;border:1px solid #d7dde4}.msg p{margin:2px 0;white-space:pre-wrap}
.msg.agent.assistant{background:#eef4fb;margin-right:120px}.msg.user.user{background:#fff4e8;margin-left:120px}
.msg.tool{background:#f6f7f9;font-size:12px}.msg.flagged{border:2px solid #c0262d}.flag{color:#c0262d;font-size:12px;margin-top:4px}.msg.user.tool{margin-left:120px}.msg.agent.tool{margin-right:120px}
.who{font-size:11px;color:#5b6670;display:block}.call{font-family:monospace;font-size:12px;color:#1f5fa8}
.verdict{font-size:16px}.confusions{display:flex;flex-wrap:wrap;gap:18px}table.confusion caption{font-size:12px;
text-align:left;color:#3d4852}svg{display:block;margin:8px 0;max-width:100%;height:auto}
svg text{font:12px system-ui,sans-serif;fill:#1d232a}details{margin:4px 0}
.tl-scroll{overflow-x:auto;max-width:100%}.tl-scroll svg.timeline{max-width:none}svg.timeline .tl-seg,
svg.timeline .tl-mark,svg.timeline .tl-overlap,svg.timeline .tl-bg{cursor:pointer}svg.timeline .tl-seg:hover{stroke:#1d232a}
.tl-audio audio{height:32px;width:420px;vertical-align:middle}td.dx.few{color:#8a949e;background:#f6f7f9}
.few-mark{font-size:11px;color:#8a949e;border:1px solid #c5ccd3;border-radius:3px;padding:0 3px}
table.segments button{font-size:11px;padding:0 4px;cursor:pointer}
"""

# Runs in the browser after load: counts the charts that were laid out with a
# size, so a headless browser's dumped DOM says whether the page rendered.
RENDER_CHECK_JS = """
(function(){var s=document.querySelectorAll('svg'),ok=0;
for(var i=0;i<s.length;i++){var r=s[i].getBoundingClientRect();if(r.width>0&&r.height>0){ok++;}}
document.body.setAttribute('data-svg-total',String(s.length));
document.body.setAttribute('data-svg-rendered',String(ok));
document.body.setAttribute('data-render-check','done');})();
"""

# A duplex timeline plays its call's recording from where it is clicked (a bar, a mark, any point of
# the clock, or a segment row's button) and follows playback with a line. The seek asked for and the
# seek done are written on the player (data-seek-s, data-seeked-s) for a test to read.
TIMELINE_JS = """
(function(){var svgs=document.querySelectorAll('svg.timeline');
for(var i=0;i<svgs.length;i++){(function(svg){
var audio=document.getElementById(svg.getAttribute('data-audio')||'');
var x0=parseFloat(svg.getAttribute('data-x0')),pps=parseFloat(svg.getAttribute('data-px-per-s')),
dur=parseFloat(svg.getAttribute('data-duration-s')),head=svg.querySelector('.tl-playhead');
function seek(t){if(!(t>=0)){return;}t=Math.min(t,dur);svg.setAttribute('data-seeked-s',String(t));
if(!audio){return;}audio.setAttribute('data-seek-s',String(t));
var go=function(){audio.currentTime=t;var p=audio.play();if(p&&p.catch){p.catch(function(){});}};
if(audio.readyState>=1){go();}else{audio.preload='auto';audio.addEventListener('loadedmetadata',go,{once:true});audio.load();}}
svg.addEventListener('click',function(ev){var el=ev.target.closest?ev.target.closest('[data-seek]'):null;
if(el){seek(parseFloat(el.getAttribute('data-seek')));return;}
var r=svg.getBoundingClientRect(),vb=svg.viewBox.baseVal;seek(((ev.clientX-r.left)*vb.width/r.width-x0)/pps);});
var buttons=document.querySelectorAll('button[data-timeline="'+svg.id+'"]');
for(var j=0;j<buttons.length;j++){buttons[j].addEventListener('click',function(ev){
seek(parseFloat(ev.currentTarget.getAttribute('data-seek')));});}
if(audio){audio.addEventListener('seeked',function(){audio.setAttribute('data-seeked-s',String(audio.currentTime));});
audio.addEventListener('timeupdate',function(){if(!head){return;}var x=x0+audio.currentTime*pps;
head.setAttribute('x1',x);head.setAttribute('x2',x);head.setAttribute('visibility','visible');});}
})(svgs[i]);}})();
"""
