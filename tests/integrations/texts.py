"""Short texts on six topics, two queries each, for the tests that run a real text model."""

from __future__ import annotations

TOPICS = {
    "cooking": [
        "Boil the pasta in salted water for nine minutes.",
        "A good tomato sauce needs garlic, olive oil and basil.",
        "Knead the bread dough until it is smooth and elastic.",
        "Roast the vegetables at a high oven temperature.",
        "Season the soup with pepper just before serving.",
    ],
    "football": [
        "The striker scored twice in the second half.",
        "The goalkeeper saved a penalty in the final minute.",
        "The league title was decided on the last match day.",
        "The coach changed the team's formation at half time.",
        "Fans filled the stadium for the derby.",
    ],
    "markets": [
        "Share prices fell sharply after the earnings report.",
        "The central bank raised interest rates again.",
        "Investors moved money into government bonds.",
        "The currency weakened against the dollar.",
        "Inflation figures surprised economists this month.",
    ],
    "space": [
        "The rocket carried a satellite into low Earth orbit.",
        "Astronauts repaired the space station's solar panel.",
        "A probe landed on the surface of Mars.",
        "The telescope photographed a distant galaxy.",
        "The launch was delayed because of strong winds.",
    ],
    "gardening": [
        "Water the tomato plants early in the morning.",
        "Prune the roses at the end of winter.",
        "Compost improves the soil in a vegetable garden.",
        "Slugs eat the young lettuce leaves.",
        "Plant the tulip bulbs in autumn.",
    ],
    "music": [
        "She tuned her guitar before the concert.",
        "The orchestra rehearsed the symphony all week.",
        "The band released a new album on Friday.",
        "He practises the piano scales every day.",
        "The singer's voice filled the concert hall.",
    ],
}
QUERIES = {
    "cooking": ["how do I make pasta sauce", "baking bread at home"],
    "football": ["who won the soccer game", "goalkeeper penalty save"],
    "markets": ["why are stocks going down", "interest rate decision"],
    "space": ["mission to Mars", "satellite launch"],
    "gardening": ["growing vegetables", "when to plant flowers"],
    "music": ["learning an instrument", "classical music performance"],
}


def texts():
    """Corpus ids in row order and in string order alike (d00, d01, ...), so that both tools
    break an exact tie the same way; each query is relevant to its topic's five documents."""
    corpus, relevant, queries = {}, {}, {}
    for t, (topic, docs) in enumerate(TOPICS.items()):
        ids = [f"d{t * 5 + i:02d}" for i in range(len(docs))]
        corpus.update(zip(ids, docs, strict=True))
        for j, text in enumerate(QUERIES[topic]):
            qid = f"q{t}{j}"
            queries[qid] = text
            relevant[qid] = set(ids)
    return queries, corpus, relevant
