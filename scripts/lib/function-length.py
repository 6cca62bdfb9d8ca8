"""Lists hand-written Swift functions and initializers in Sources/ over 60 lines (signature to
closing brace, comments included; Generated/ aside). scripts/test.sh fails when it lists any."""
import re, subprocess, sys
LIMIT = 60
files=subprocess.check_output(['git','ls-files','Sources/*.swift']).decode().split()
pat=re.compile(r'^\s*(?:@[\w()]+\s+)*(?:(?:public|package|private|fileprivate|internal|static|override|mutating|nonisolated|convenience|required|final|@discardableResult)\s+)*(?:func\s+\w+|init[?!]?)\s*[<(]')
out=[]
for f in files:
    if 'Generated/' in f: continue
    lines=open(f).read().split('\n')
    for i in range(len(lines)):
        if not pat.match(lines[i]): continue
        depth=0; started=False; j=i; code=0
        while j<len(lines):
            raw=lines[j]; l=re.sub(r'"(?:\\.|[^"\\])*"','',raw).split('//')[0]
            if l.strip(): code+=1
            for c in l:
                if c=='{': depth+=1; started=True
                elif c=='}': depth-=1
            if started and depth<=0: break
            if not started and j>i+8: break
            j+=1
        if started and j - i + 1 > LIMIT: out.append((j - i + 1, f, i + 1, lines[i].strip()[:80]))
for length, path, line, signature in sorted(out, reverse=True):
    print(f"{path}:{line}: {length} lines: {signature}")
sys.exit(1 if out else 0)
