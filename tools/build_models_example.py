"""Writes unitize/examples/models-mini/ (three humans with offsets, two model runs with quotes): python tools/build_models_example.py."""
import json, os
root = "unitize/examples/models-mini"
os.makedirs(f"{root}/texts", exist_ok=True); os.makedirs(f"{root}/annotations", exist_ok=True)
docs = [
 ("d01", "Angela Merkel met Emmanuel Macron in Paris on Monday.", [("Angela Merkel","PER"),("Emmanuel Macron","PER"),("Paris","LOC")]),
 ("d02", "The United Nations opened an office in Nairobi.", [("United Nations","ORG"),("Nairobi","LOC")]),
 ("d03", "Toyota said its factory near Nagoya will close.", [("Toyota","ORG"),("Nagoya","LOC")]),
 ("d04", "Serena Williams won her first title in New York.", [("Serena Williams","PER"),("New York","LOC")]),
 ("d05", "The World Bank lent Kenya two billion dollars.", [("World Bank","ORG"),("Kenya","LOC")]),
 ("d06", "Lionel Messi joined Inter Miami after leaving Paris.", [("Lionel Messi","PER"),("Inter Miami","ORG"),("Paris","LOC")]),
 ("d07", "Greenpeace protested outside the Shell offices in London.", [("Greenpeace","ORG"),("Shell","ORG"),("London","LOC")]),
 ("d08", "Marie Curie worked in Paris and in Warsaw.", [("Marie Curie","PER"),("Paris","LOC"),("Warsaw","LOC")]),
 ("d09", "The Red Cross sent doctors to Aleppo.", [("Red Cross","ORG"),("Aleppo","LOC")]),
 ("d10", "Apple hired Jony Ive's former team in Cupertino.", [("Apple","ORG"),("Jony Ive","PER"),("Cupertino","LOC")]),
 ("d11", "Nelson Mandela spoke to students in Johannesburg.", [("Nelson Mandela","PER"),("Johannesburg","LOC")]),
 ("d12", "UNESCO listed the old town of Tallinn.", [("UNESCO","ORG"),("Tallinn","LOC")]),
]
def spans(text, ents):
    out=[]; pos=0
    for q,l in ents:
        b=text.index(q); out.append({"start":b,"end":b+len(q),"label":l})
    return out
# human variations: (doc, entity index) -> change
drop = {"ben": {("d03",1),("d09",0)}, "chen": {("d06",1),("d10",1)}}
relabel = {"ben": {("d06",1):"LOC",("d12",0):"LOC"}, "chen": {("d07",1):"LOC",("d02",1):"ORG"}}
extend = {"chen": {("d04",1):"in "}, "ben": {("d05",0):"The "}}
for who in ["ana","ben","chen"]:
    with open(f"{root}/annotations/{who}.jsonl","w") as f:
        for d,t,e in docs:
            rows=[]
            for k,(q,l) in enumerate(e):
                if (d,k) in drop.get(who,()): continue
                b=t.index(q); en=b+len(q)
                ext=extend.get(who,{}).get((d,k))
                if ext and ext.startswith(" "): en+=len(ext)
                elif ext: b-=len(ext)
                rows.append({"start":b,"end":en,"label":relabel.get(who,{}).get((d,k),l)})
            f.write(json.dumps({"doc":d,"spans":rows})+"\n")
# model runs: quotes with drift
quote_drift = {"gpt-run1": {("d01",0):"angela merkel", ("d06",1):"Inter  Miami", ("d10",1):"Jony Ive’s", ("d11",1):"Johanesburg"},
               "gpt-run2": {("d01",0):"Angela Merkel", ("d07",1):"Shell offices", ("d11",1):"Johannesburg", ("d08",2):"Warszawa"}}
mdrop = {"gpt-run1": {("d09",0)}, "gpt-run2": {("d03",1)}}
mlabel = {"gpt-run1": {("d06",1):"LOC"}, "gpt-run2": {("d12",0):"LOC"}}
for who in ["gpt-run1","gpt-run2"]:
    with open(f"{root}/annotations/{who}.jsonl","w") as f:
        for d,t,e in docs:
            rows=[]
            for k,(q,l) in enumerate(e):
                if (d,k) in mdrop[who]: continue
                rows.append({"quote":quote_drift[who].get((d,k),q),"label":mlabel[who].get((d,k),l)})
            if d=="d08" and who=="gpt-run1": rows[1]["occurrence"]=1
            f.write(json.dumps({"doc":d,"spans":rows}, ensure_ascii=False)+"\n")
for d,t,e in docs:
    open(f"{root}/texts/{d}.txt","w").write(t+"\n")
