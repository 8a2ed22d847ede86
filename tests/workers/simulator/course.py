"""A short course text and request builders shared by the simulator tests."""

from __future__ import annotations

from typing import Any

PHOTOSYNTHESIS = """\
Photosynthesis is the process by which green plants convert light energy into chemical energy. It
takes place mainly in the chloroplasts of leaf cells, which contain the pigment chlorophyll.
Chlorophyll absorbs red and blue light most strongly and reflects green light, which is why leaves
look green. The light-dependent reactions occur in the thylakoid membranes and produce ATP and
NADPH. Water molecules are split during these reactions, releasing oxygen as a by-product. The
Calvin cycle takes place in the stroma and uses ATP and NADPH to fix carbon dioxide into sugars.
The enzyme RuBisCO catalyses the first major step of carbon fixation in the Calvin cycle. Stomata
are small pores on the leaf surface that regulate the exchange of gases with the atmosphere. Guard
cells open and close the stomata in response to light, humidity and carbon dioxide levels. Plants
in hot, dry climates often use C4 or CAM pathways to reduce water loss. In C4 plants, carbon
dioxide is first captured in mesophyll cells and then delivered to bundle sheath cells. CAM plants
open their stomata at night and store carbon dioxide as organic acids. The rate of photosynthesis
depends on light intensity, temperature and carbon dioxide concentration. At very high
temperatures, enzymes denature and the rate of photosynthesis falls sharply. Glucose produced by
photosynthesis is used for respiration or stored as starch. Cellulose, made from glucose,
strengthens plant cell walls. Photosynthesis supplies almost all of the oxygen in the atmosphere
and the energy in food chains.
"""


def quiz_messages(document: str = PHOTOSYNTHESIS, questions: int = 15, extra: str = "") -> list[Any]:
    """A full quiz prompt in the shared prompt format."""
    user = (
        f"Write exactly {questions} questions, each with exactly 4 "
        f"options.{extra}\n<document>\n{document}\n</document>"
    )
    return [{"role": "system", "content": "You write quizzes."}, {"role": "user", "content": user}]


def quiz_format(name: str = "quiz") -> Any:
    """A structured-output response_format naming the quiz schema."""
    schema = {"type": "object", "properties": {"title": {"type": "string"}, "questions": {"type": "array"}}}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
