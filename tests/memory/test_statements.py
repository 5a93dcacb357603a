from apps.memory.statements import replaced_fact, semantic_statement


def test_a_statement_names_its_subject_once() -> None:
    assert semantic_statement("Nadia", "Nadia: I'm vegan.") == "Nadia: I'm vegan."
    assert semantic_statement("Lyon", "Lyon is two hours from Geneva.") == "Lyon: Lyon is two hours from Geneva."
    assert semantic_statement("", "A fact without a name.") == "A fact without a name."


def test_a_statement_naming_its_replaced_value_finds_the_fact_that_states_it() -> None:
    facts = [(("nadia", "rent"), "Nadia: The rent is 1,100 euros a month."), (("nadia", "job"), "Nadia: I bake.")]
    assert replaced_fact("1,100", facts) == ("nadia", "rent")
    assert replaced_fact("100", facts) is None  # a part of a number is not the number
    assert replaced_fact("coffee", facts) is None
    newer = [*facts, (("nadia", "rent: flat"), "Nadia: We pay 1,100 for the flat now.")]
    assert replaced_fact("1,100", newer) == ("nadia", "rent: flat")  # the newest that names it


def test_a_fact_stated_about_someone_else_reads_as_the_speakers_words() -> None:
    assert (
        semantic_statement("Tiago", "Nadia, about Tiago: He moved to Berlin.")
        == "Nadia, about Tiago: He moved to Berlin."
    )
    assert semantic_statement("Omar", "Nadia, about Tiago: He moved.") == "Omar: Nadia, about Tiago: He moved."


def test_the_words_of_a_statement_about_someone_else() -> None:
    from apps.memory.statements import without_about

    assert without_about("Nadia, about Tiago: He moved to Berlin.") == "He moved to Berlin."
    assert without_about("Nadia: I'm vegan.") == "Nadia: I'm vegan."
