"""The closed vocabulary: canonical terms pass, synonyms fold, anything else is rejected."""

from __future__ import annotations

import pytest

from kenning import vocabulary as vocab
from kenning.errors import VocabularyError

REQUIRED_TYPES = ("person organization project topic meeting decision concept finding rule "
                  "open-question artifact insight task event thing").split()
REQUIRED_RELATIONS = ("works_at founded invested_in advises attended member_of part_of "
                      "depends_on supports contradicts supersedes evolved_into caused_by enables "
                      "exemplifies informs uses investigates related_to mentions").split()


@pytest.mark.parametrize("name", REQUIRED_TYPES)
def test_required_entity_types_are_canonical(name: str) -> None:
    assert vocab.entity_type(name) == name


@pytest.mark.parametrize("name", REQUIRED_RELATIONS)
def test_required_relations_are_canonical(name: str) -> None:
    assert vocab.relation(name) == name


@pytest.mark.parametrize(("given", "canonical"), [
    ("connected_to", "related_to"), ("aspect_of", "part_of"), ("employed_by", "works_at"),
    ("Employed By", "works_at"), ("works-for", "works_at"), ("see_also", "related_to"),
])
def test_relation_synonyms_fold(given: str, canonical: str) -> None:
    assert vocab.relation(given) == canonical


@pytest.mark.parametrize(("given", "canonical"), [
    ("People", "person"), ("company", "organization"), ("open_question", "open-question"),
    ("Open Question", "open-question"), ("ADR", "decision"),
])
def test_entity_type_synonyms_fold(given: str, canonical: str) -> None:
    assert vocab.entity_type(given) == canonical


def test_domains_fold_and_reject() -> None:
    assert vocab.domain("Eng") == "engineering"
    with pytest.raises(VocabularyError) as info:
        vocab.domain("astrology")
    assert "unknown domain 'astrology'; allowed: work, personal" in str(info.value)


@pytest.mark.parametrize(("fold", "bad", "listed"), [
    (vocab.relation, "likes", "works_at, founded, invested_in"),
    (vocab.entity_type, "robot", "person, organization, project"),
    (vocab.fact_status, "maybe", "active, superseded, invalidated"),
    (vocab.epistemic, "certain", "assertion, hypothesis, speculation, unknown"),
])
def test_unknown_values_are_rejected_listing_every_allowed_value(fold, bad, listed) -> None:
    with pytest.raises(VocabularyError) as info:
        fold(bad)
    message = str(info.value)
    assert f"{bad!r}" in message and listed in message
    assert info.value.value == bad


def test_synonyms_only_point_at_canonical_terms() -> None:
    assert set(vocab.RELATION_SYNONYMS.values()) <= set(vocab.RELATION_TYPES)
    assert set(vocab.ENTITY_TYPE_SYNONYMS.values()) <= set(vocab.ENTITY_TYPES)
    assert set(vocab.DOMAIN_SYNONYMS.values()) <= set(vocab.DOMAINS)
    assert not set(vocab.RELATION_SYNONYMS) & set(vocab.RELATION_TYPES)


def test_epistemic_default_is_unknown() -> None:
    assert vocab.EPISTEMIC_DEFAULT == "unknown"
