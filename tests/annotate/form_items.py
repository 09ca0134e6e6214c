"""Items for the form-layout browser tests, written for judgelab (no dataset text): a news article as
long as SummEval's longest (587 words; the article here has 621) with a summary, and a story
fragment as long as Chiang & Lee's WritingPrompts fragments (about 150 words) with its prompt."""
from __future__ import annotations

_ARTICLE = [
    "The town council of Harrowgate voted on Tuesday evening to close the old river bridge to cars from the first of "
    "March, ending months of argument over a crossing that engineers say is no longer safe for heavy traffic.",
    "The decision, passed by seven votes to four after a three-hour meeting, means that drivers heading for the "
    "industrial estate on the far bank will have to use the ring road, a detour of about four miles. Pedestrians "
    "and cyclists will still be allowed to cross while the council looks for money to repair the structure.",
    "An inspection carried out in October found cracks in two of the bridge's five stone arches and corrosion in "
    "the steel ties that were added in the nineteen-sixties. The engineers' report, published last month, "
    "recommended a weight limit of three tonnes and warned that the bridge could need to close completely within "
    "five years if nothing is done.",
    "Council leader Margaret Okafor said the vote had not been an easy one. \"Nobody in this chamber wanted to "
    "close the bridge,\" she told the meeting. \"But we cannot ask people to drive over a crossing that our own "
    "engineers have told us is failing. Safety has to come first.\"",
    "Opponents argued that the closure would hurt shops in the old town, which depend on trade from workers at the "
    "industrial estate. Councillor David Brennan, who voted against the plan, said several businesses had already "
    "told him they feared for their future. \"Every lunchtime hundreds of people cross that bridge to buy "
    "sandwiches, coffee and newspapers,\" he said. \"Put them on the ring road and they will simply stop coming.\"",
    "The chamber of commerce has asked the council to run a free shuttle bus across the river during the closure. "
    "Its chairwoman, Priya Raman, said the group would present a costed proposal at the next meeting in February. "
    "Council officers said a shuttle was possible but would cost about ninety thousand pounds a year.",
    "Repairs are expected to cost between four and six million pounds, far more than the council's annual budget "
    "for roads and bridges. The council has applied to a national fund for historic structures and expects an "
    "answer in the summer. If the application succeeds, work could begin next year and take around eighteen "
    "months, officials said.",
    "The bridge, which opened in 1823, is listed as a building of special historic interest, which limits the "
    "methods that can be used to strengthen it. Engineers have suggested replacing the steel ties and filling the "
    "cracks with lime mortar, an approach used on similar bridges elsewhere in the region.",
    "Residents who live near the ring road have raised their own concerns. A petition signed by more than eight "
    "hundred people asks for a lower speed limit and a new crossing near the primary school on Mill Lane, where "
    "parents say traffic is already heavy at the start and end of the school day. The council said it would "
    "study the request and publish traffic counts before the closure begins.",
    "Local bus companies said they would change their timetables to avoid the bridge. The number 14 service, "
    "which crosses the river every twenty minutes, will be diverted along the ring road and will take about ten "
    "minutes longer. Operators warned that some early-morning journeys might be cut if drivers cannot keep to the "
    "new schedule.",
    "Police said they would put up signs around the town in the weeks before the closure and would enforce the "
    "ban with cameras at both ends of the bridge. Drivers who ignore it could face a fine of up to one hundred "
    "pounds. The council will review the arrangement in September, when it expects to know whether the repair "
    "money has been granted.",
]
ARTICLE = "\n".join(_ARTICLE)
SUMMARY = ("Harrowgate council voted to close the old river bridge to cars from March after engineers found cracks "
           "and corroded ties. Pedestrians and cyclists can still cross. Businesses in the old town fear losing trade, "
           "and the chamber of commerce wants a shuttle bus. Repairs could cost up to six million pounds; the council "
           "has applied to a national fund and will review the closure in September.")
STORY_PROMPT = "You wake up to find that every clock in the world has stopped, except yours."
STORY = ("The silence woke me before the alarm could. No traffic, no neighbours, no hum from the fridge. Only the "
         "old brass clock on my nightstand kept ticking, louder than I had ever noticed. I checked my phone: 7:14, "
         "frozen. The kitchen clock said the same, and so did the one above the bakery across the street, where "
         "Mrs. Lund stood motionless with a tray of rolls in her hands, steam hanging above them like glass. I "
         "waved. She did not blink. I walked the whole length of the high street and nothing moved but me and the "
         "second hand in my pocket, which I had wrapped in a handkerchief as if it might catch cold. By noon, by my "
         "clock, I understood two things. Whatever had happened had happened to everyone else. And when my clock "
         "ran down, as it did every Sunday, I would have to decide whether to wind it again.")


def summeval_like_item() -> dict[str, str]:
    return {"id": "bridge", "text": SUMMARY, "context": ARTICLE}


def story_item() -> dict[str, str]:
    return {"id": "clock", "text": STORY, "context": STORY_PROMPT}
